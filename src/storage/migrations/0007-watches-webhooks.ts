import { sql, type Kysely } from 'kysely';

/**
 * Watches and signed webhooks (issue 14). Same conventions as 0001: text ISO timestamps, integer
 * flags, text ids.
 *
 * - plans.watch_limit: how many watches an account of the plan may hold (Standard 100,
 *   Professional 500, VIP 2,000; custom plans set their own, 100 unless told).
 * - watches: a VIN, or one auction lot, that an account wants events for. The partial unique
 *   indexes make "the same VIN twice" answer the existing watch, even under concurrent requests.
 * - webhook_endpoints: one per account; the signing secret encrypted (AES-256-GCM), since it must
 *   be read back to sign; the previous secret kept until its grace period ends.
 * - webhook_outbox: one row per event per account, written in the transaction of the import batch
 *   that caused it; also its delivery state (pending, delivered, failed) and the lease of the
 *   worker sending it.
 * - webhook_attempts: every attempt: when, where, status, duration, the first bytes of the answer.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('plans').addColumn('watch_limit', 'integer', (c) => c.notNull().defaultTo(100)).execute();
  await db.updateTable('plans').set({ watch_limit: 500 }).where('code', '=', 'professional').execute();
  await db.updateTable('plans').set({ watch_limit: 2000 }).where('code', '=', 'vip').execute();

  await db.schema
    .createTable('watches')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('vin', 'text')
    .addColumn('auction', 'text')
    .addColumn('lot_id', 'integer')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addCheckConstraint('watches_target_check', sql`(vin is not null and auction is null and lot_id is null) or (vin is null and auction is not null and lot_id is not null)`)
    .execute();
  await db.schema.createIndex('watches_account_vin_key').on('watches').columns(['account_id', 'vin']).unique().where(sql.ref('vin'), 'is not', null).execute();
  await db.schema
    .createIndex('watches_account_lot_key')
    .on('watches')
    .columns(['account_id', 'auction', 'lot_id'])
    .unique()
    .where(sql.ref('lot_id'), 'is not', null)
    .execute();
  // What an import batch probes: the watches of its VINs and of its lots.
  await db.schema.createIndex('watches_vin_idx').on('watches').column('vin').where(sql.ref('vin'), 'is not', null).execute();
  await db.schema.createIndex('watches_lot_idx').on('watches').columns(['lot_id', 'auction']).where(sql.ref('lot_id'), 'is not', null).execute();
  await db.schema.createIndex('watches_account_page_idx').on('watches').columns(['account_id', 'created_at', 'id']).execute();

  await db.schema
    .createTable('webhook_endpoints')
    .addColumn('account_id', 'text', (c) => c.primaryKey().references('accounts.id'))
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('secret_box', 'text', (c) => c.notNull())
    .addColumn('secret_hint', 'text', (c) => c.notNull())
    .addColumn('previous_secret_box', 'text')
    .addColumn('previous_secret_until', 'text')
    .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('failing_since', 'text')
    .addColumn('disabled_at', 'text')
    .addColumn('disabled_reason', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('webhook_outbox')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('type', 'text', (c) => c.notNull())
    // The exact body delivered (and signed) on every attempt.
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('pending', 'delivered', 'failed')`))
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'text', (c) => c.notNull())
    // 72 hours after the event (or after a resend): no retry starts after it.
    .addColumn('give_up_at', 'text', (c) => c.notNull())
    .addColumn('lease_owner', 'text')
    .addColumn('lease_until', 'text')
    .addColumn('last_attempt_at', 'text')
    .addColumn('finished_at', 'text')
    .execute();
  // The workers' claim: pending events due first. Partial, so delivered events cost it nothing.
  await db.schema.createIndex('webhook_outbox_due_idx').on('webhook_outbox').columns(['next_attempt_at']).where(sql.ref('status'), '=', 'pending').execute();
  await db.schema.createIndex('webhook_outbox_pending_created_idx').on('webhook_outbox').columns(['created_at']).where(sql.ref('status'), '=', 'pending').execute();
  await db.schema.createIndex('webhook_outbox_account_page_idx').on('webhook_outbox').columns(['account_id', 'created_at', 'id']).execute();

  await db.schema
    .createTable('webhook_attempts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('event_id', 'text', (c) => c.notNull().references('webhook_outbox.id'))
    .addColumn('attempted_at', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('error', 'text')
    .addColumn('response_excerpt', 'text')
    .execute();
  await db.schema.createIndex('webhook_attempts_event_idx').on('webhook_attempts').columns(['event_id', 'attempted_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('webhook_attempts').execute();
  await db.schema.dropTable('webhook_outbox').execute();
  await db.schema.dropTable('webhook_endpoints').execute();
  await db.schema.dropTable('watches').execute();
  await db.schema.alterTable('plans').dropColumn('watch_limit').execute();
}
