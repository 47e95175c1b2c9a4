import type { Kysely } from 'kysely';

/**
 * The operators' audit log: one row per change an operator made to a customer's account, plan,
 * subscription, tokens or invoices, or an import through the admin API, from the CLI or the admin
 * API alike (docs/operators.md). `id` sorts by time (newSortableId), so the newest-first listing
 * and its cursor read the primary key alone. `actor` is the operator token's name or
 * "cli:<os user>"; `details` is JSON text that never holds a secret.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('operator_audit')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('at', 'text', (c) => c.notNull())
    .addColumn('actor', 'text', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('target', 'text', (c) => c.notNull())
    .addColumn('details', 'text', (c) => c.notNull())
    .execute();
  // "What happened to this account/invoice": entries of one target, newest first.
  await db.schema.createIndex('operator_audit_target_idx').on('operator_audit').columns(['target', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('operator_audit').execute();
}
