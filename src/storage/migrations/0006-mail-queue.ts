import { sql, type Kysely } from 'kysely';

/**
 * The durable mail queue: a request queues its message and answers; the delivery worker sends it
 * afterwards, retrying with backoff (docs/mail.md). `body` never holds a secret: a password
 * reset's link is made at send time (docs/decisions.md). A claim (`claim_id` until `lease_until`)
 * lets one worker among several instances hold a message while it sends it. Same conventions as
 * 0001: ISO text timestamps.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('mail_queue')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('password_reset')`))
    .addColumn('recipient', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
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
  // The worker's claim: queued messages by when they are due.
  await db.schema.createIndex('mail_queue_due_idx').on('mail_queue').columns(['status', 'next_attempt_at']).execute();
  // Pruning settled messages by age.
  await db.schema.createIndex('mail_queue_created_idx').on('mail_queue').column('created_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('mail_queue').execute();
}
