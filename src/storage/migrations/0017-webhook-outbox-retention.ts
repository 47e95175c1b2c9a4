import { sql, type Kysely } from 'kysely';

/**
 * The delivery worker deletes finished events (delivered, or failed after their 72 hours) a while
 * after they finished, oldest first, in batches: this index finds them without reading the
 * pending ones or the whole table.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('webhook_outbox_finished_idx').on('webhook_outbox').columns(['finished_at']).where(sql.ref('status'), '!=', 'pending').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('webhook_outbox_finished_idx').execute();
}
