import { sql, type Kysely } from 'kysely';

/**
 * Batches (issue 26): a customer's list of searches run in the background (src/batches/).
 *
 * - batches: one per request; `token_id` is the token whose searches the items are; the
 *   Idempotency-Key of the request and the SHA-256 of its items, unique per account, so that a
 *   repeat answers the same batch even under concurrent requests; the runner's lease
 *   (`lease_owner`, `lease_until`), so that on PostgreSQL another instance takes a batch over when
 *   the one running it died, and on SQLite a restarted server does.
 * - batch_items: one per item, by (batch_id, idx): its input as JSON, and once it ran the HTTP
 *   status its search would have had with the report (id and address) or the message. An item
 *   without a status has not run; the runner finds the next ones through the primary key.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('batches')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('token_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('queued', 'running', 'done')`))
    .addColumn('total', 'integer', (c) => c.notNull())
    .addColumn('idempotency_key', 'text')
    .addColumn('body_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('started_at', 'text')
    .addColumn('finished_at', 'text')
    .addColumn('lease_owner', 'text')
    .addColumn('lease_until', 'text')
    .execute();
  await db.schema.createIndex('batches_account_key').on('batches').columns(['account_id', 'idempotency_key']).unique().where(sql.ref('idempotency_key'), 'is not', null).execute();
  // The list, newest first with its cursor; the runner's claim of unfinished batches.
  await db.schema.createIndex('batches_account_page_idx').on('batches').columns(['account_id', 'created_at', 'id']).execute();
  await db.schema.createIndex('batches_unfinished_idx').on('batches').columns(['created_at']).where(sql.ref('status'), '!=', 'done').execute();

  await db.schema
    .createTable('batch_items')
    .addColumn('batch_id', 'text', (c) => c.notNull().references('batches.id'))
    .addColumn('idx', 'integer', (c) => c.notNull())
    .addColumn('input', 'text', (c) => c.notNull())
    .addColumn('status', 'integer')
    .addColumn('report_id', 'text')
    .addColumn('report_url', 'text')
    .addColumn('message', 'text')
    .addColumn('finished_at', 'text')
    .addPrimaryKeyConstraint('batch_items_pkey', ['batch_id', 'idx'])
    .execute();
  // The usage page's count of an account's batch items in a period goes through the batches.
  await db.schema.createIndex('batch_items_finished_idx').on('batch_items').columns(['batch_id', 'finished_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('batch_items').execute();
  await db.schema.dropTable('batches').execute();
}
