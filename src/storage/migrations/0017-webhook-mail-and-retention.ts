import { sql, type Kysely } from 'kysely';

const MAIL_KINDS_BEFORE = sql`kind in ('password_reset', 'billing')`;
const MAIL_KINDS = sql`kind in ('password_reset', 'billing', 'webhook_endpoint_disabled')`;

/** The mail queue as 0016 left it (0006's, with an HTML part), with the kinds it accepts. */
async function createMailQueue(db: Kysely<any>, table: string, kinds: typeof MAIL_KINDS): Promise<void> {
  await db.schema
    .createTable(table)
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull().check(kinds))
    .addColumn('recipient', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('html', 'text')
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('queued', 'sent', 'skipped', 'failed')`))
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('next_attempt_at', 'text', (c) => c.notNull())
    .addColumn('claim_id', 'text')
    .addColumn('lease_until', 'text')
    .addColumn('sent_at', 'text')
    .addColumn('failed_at', 'text')
    .addColumn('last_error', 'text')
    .execute();
}

/**
 * The mail queue takes the mail of a disabled webhook endpoint, which was sent past it; SQLite
 * cannot change a CHECK in place, so the table is made again (the same statements on both
 * databases) and its rows copied.
 */
async function remakeMailQueue(db: Kysely<any>, kinds: typeof MAIL_KINDS): Promise<void> {
  await createMailQueue(db, 'mail_queue_next', kinds);
  await sql`insert into mail_queue_next select id, kind, recipient, subject, body, html, status, attempts, created_at, next_attempt_at, claim_id, lease_until, sent_at, failed_at, last_error from mail_queue`.execute(db);
  await db.schema.dropTable('mail_queue').execute();
  await db.schema.alterTable('mail_queue_next').renameTo('mail_queue').execute();
  await db.schema.createIndex('mail_queue_due_idx').on('mail_queue').columns(['status', 'next_attempt_at']).execute();
  await db.schema.createIndex('mail_queue_created_idx').on('mail_queue').column('created_at').execute();
}

/**
 * The mail queue takes the endpoint-disabled mail, and the delivery worker's prune of finished
 * webhook events (oldest first, in batches) finds them through a partial index on `finished_at`
 * without reading the pending ones or the whole table.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await remakeMailQueue(db, MAIL_KINDS);
  await db.schema.createIndex('webhook_outbox_finished_idx').on('webhook_outbox').columns(['finished_at']).where(sql.ref('status'), '!=', 'pending').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('webhook_outbox_finished_idx').execute();
  await db.deleteFrom('mail_queue').where('kind', '=', 'webhook_endpoint_disabled').execute();
  await remakeMailQueue(db, MAIL_KINDS_BEFORE);
}
