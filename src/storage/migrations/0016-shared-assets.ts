import { sql, type Kysely } from 'kysely';

/**
 * What every instance of a deployment must share, and billing mail (docs/mail.md, docs/scale-out.md):
 * - legal_documents: the operator's terms and privacy policy, set once (`vinhistory legal set`) and
 *   read by every instance, instead of a file copied to each instance's disk;
 * - billing_notices: one row per billing mail decided (an invoice issued or paid, a quota threshold
 *   in one period, a plan ending or ended). Its primary key makes each notice happen once, whichever
 *   instance's sweep finds it first; the mail is queued in the same transaction as the row;
 * - mail_queue: an HTML alternative beside the text, and the `billing` kind. SQLite cannot change a
 *   CHECK constraint in place, so the table is rebuilt (the same statements on both databases).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('legal_documents')
    .addColumn('name', 'text', (c) => c.primaryKey().check(sql`name in ('terms', 'privacy')`))
    .addColumn('markdown', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('billing_notices')
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('billing_notices_pk', ['kind', 'subject'])
    .execute();
  // Invoices issued or paid before billing mail existed are not announced when it is deployed.
  await sql`insert into billing_notices (kind, subject, account_id, created_at)
    select 'invoice_issued', id, account_id, created_at from invoices`.execute(db);
  await sql`insert into billing_notices (kind, subject, account_id, created_at)
    select 'invoice_paid', id, account_id, paid_at from invoices where status = 'paid'`.execute(db);
  // The sweep looks for plans ending soon or lately ended by their end.
  await db.schema.createIndex('subscriptions_ends_idx').on('subscriptions').column('ends_at').execute();

  await db.schema
    .createTable('mail_queue_v16')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('password_reset', 'billing')`))
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
  await sql`insert into mail_queue_v16 (id, kind, recipient, subject, body, status, attempts, created_at, next_attempt_at, claim_id, lease_until, sent_at, failed_at, last_error)
    select id, kind, recipient, subject, body, status, attempts, created_at, next_attempt_at, claim_id, lease_until, sent_at, failed_at, last_error from mail_queue`.execute(db);
  await db.schema.dropTable('mail_queue').execute();
  await db.schema.alterTable('mail_queue_v16').renameTo('mail_queue').execute();
  await db.schema.createIndex('mail_queue_due_idx').on('mail_queue').columns(['status', 'next_attempt_at']).execute();
  await db.schema.createIndex('mail_queue_created_idx').on('mail_queue').column('created_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('legal_documents').execute();
  await db.schema.dropTable('billing_notices').execute();
  await db.schema.dropIndex('subscriptions_ends_idx').execute();
  await db.deleteFrom('mail_queue').where('kind', '=', 'billing').execute();
  await db.schema.alterTable('mail_queue').dropColumn('html').execute();
}
