import { sql, type Kysely } from 'kysely';

const MAIL_KINDS_BEFORE = sql`kind in ('password_reset', 'billing', 'webhook_endpoint_disabled')`;
const MAIL_KINDS = sql`kind in ('password_reset', 'billing', 'webhook_endpoint_disabled', 'feed_alert')`;

/** The mail queue as 0017 left it, with the kinds it accepts. */
async function remakeMailQueue(db: Kysely<any>, kinds: typeof MAIL_KINDS): Promise<void> {
  await db.schema
    .createTable('mail_queue_next')
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
  await sql`insert into mail_queue_next select id, kind, recipient, subject, body, html, status, attempts, created_at, next_attempt_at, claim_id, lease_until, sent_at, failed_at, last_error from mail_queue`.execute(db);
  await db.schema.dropTable('mail_queue').execute();
  await db.schema.alterTable('mail_queue_next').renameTo('mail_queue').execute();
  await db.schema.createIndex('mail_queue_due_idx').on('mail_queue').columns(['status', 'next_attempt_at']).execute();
  await db.schema.createIndex('mail_queue_created_idx').on('mail_queue').column('created_at').execute();
}

/**
 * Feeds the service pulls itself (docs/feeds.md). One row per feed holds what the operator set
 * (url, format, schedule, headers: literal values sealed, `env:NAME` kept as the name alone), the
 * state of its pulls (the last attempt and the last good pull, whose validators, size, row count
 * and CSV header the next pull is sent with and judged against), the lease that lets one instance
 * at a time pull it, and the checkpoint of a paged pull under way (the next page and what the
 * pages before it counted), so that a pull that died resumes there.
 *
 * `feed_listing` holds, for a feed that is a full listing, the lots its last good pull listed and
 * those that left it, to tell which lots leave and which come back.
 *
 * The mail queue takes the operator's feed alerts (`feed_alert`); SQLite cannot change a CHECK in
 * place, so the table is made again as 0017 did.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('feeds')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('format', 'text', (c) => c.notNull())
    .addColumn('mapping', 'text')
    .addColumn('every_seconds', 'integer', (c) => c.notNull())
    .addColumn('headers', 'text', (c) => c.notNull())
    .addColumn('listing', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('paging', 'text')
    .addColumn('paused', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('next_run_at', 'text', (c) => c.notNull())
    // The state of the pulls.
    .addColumn('last_attempt_at', 'text')
    .addColumn('last_success_at', 'text')
    .addColumn('last_status', 'text')
    .addColumn('last_error', 'text')
    .addColumn('last_counts', 'text')
    .addColumn('failures_in_row', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('alerted', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('newest_lot_at', 'text')
    .addColumn('accept_changes', 'integer', (c) => c.notNull().defaultTo(0))
    // The last good pull: what the next one is sent with and judged against.
    .addColumn('good_etag', 'text')
    .addColumn('good_last_modified', 'text')
    .addColumn('good_bytes', 'integer')
    .addColumn('good_rows', 'integer')
    .addColumn('good_header', 'text')
    .addColumn('good_started_at', 'text')
    // The lease: one instance pulls a feed at a time.
    .addColumn('lease_owner', 'text')
    .addColumn('lease_until', 'text')
    // A paged pull under way.
    .addColumn('checkpoint', 'text')
    .execute();
  await db.schema.createIndex('feeds_due_idx').on('feeds').columns(['paused', 'next_run_at']).execute();

  await db.schema
    .createTable('feed_listing')
    .addColumn('feed_id', 'text', (c) => c.notNull().references('feeds.id').onDelete('cascade'))
    .addColumn('auction', 'text', (c) => c.notNull())
    .addColumn('lot_id', 'integer', (c) => c.notNull())
    .addColumn('listed', 'integer', (c) => c.notNull())
    .addColumn('changed_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('feed_listing_pk', ['feed_id', 'auction', 'lot_id'])
    .execute();

  await remakeMailQueue(db, MAIL_KINDS);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('feed_listing').execute();
  await db.schema.dropTable('feeds').execute();
  await db.deleteFrom('mail_queue').where('kind', '=', 'feed_alert').execute();
  await remakeMailQueue(db, MAIL_KINDS_BEFORE);
}
