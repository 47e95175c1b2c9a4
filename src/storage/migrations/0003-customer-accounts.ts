import { sql, type Kysely } from 'kysely';

/**
 * The customer's personal account: passwords, browser sessions, password resets, log-in throttling,
 * invoices and payment-provider links, shared settings (the cookie secret), and token expiry for
 * rotation. Same conventions as 0001: text ISO timestamps, integer flags, text ids.
 */
export async function up(db: Kysely<any>): Promise<void> {
  // Shared by every instance of a deployment, e.g. the generated cookie secret.
  await db.schema
    .createTable('settings')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();

  // A table of its own rather than a column of accounts: every `selectAll` on accounts (CLI,
  // first run, the API) would otherwise carry the hash along.
  await db.schema
    .createTable('account_passwords')
    .addColumn('account_id', 'text', (c) => c.primaryKey().references('accounts.id'))
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('web_sessions')
    .addColumn('id_hash', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_seen_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('web_sessions_account_idx').on('web_sessions').column('account_id').execute();
  await db.schema.createIndex('web_sessions_expires_idx').on('web_sessions').column('expires_at').execute();

  await db.schema
    .createTable('password_resets')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('used_at', 'text')
    .execute();
  await db.schema.createIndex('password_resets_account_idx').on('password_resets').column('account_id').execute();

  // Failed log-ins and reset requests, counted in a sliding window across every instance.
  await db.schema
    .createTable('auth_attempts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('auth_attempts_subject_idx').on('auth_attempts').columns(['kind', 'subject', 'created_at']).execute();
  await db.schema.createIndex('auth_attempts_created_idx').on('auth_attempts').column('created_at').execute();

  await db.schema
    .createTable('invoices')
    .addColumn('id', 'text', (c) => c.primaryKey())
    // What a customer quotes on a bank transfer, or the provider's invoice number.
    .addColumn('reference', 'text', (c) => c.notNull().unique())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('provider', 'text', (c) => c.notNull().check(sql`provider in ('manual', 'stripe')`))
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('subscribe', 'renew', 'upgrade')`))
    .addColumn('plan_code', 'text', (c) => c.notNull().references('plans.code'))
    .addColumn('billing', 'text', (c) => c.notNull().check(sql`billing in ('monthly', 'annual')`))
    .addColumn('amount_cents', 'integer', (c) => c.notNull().check(sql`amount_cents >= 0`))
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('subscription_id', 'text', (c) => c.references('subscriptions.id'))
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('open', 'paid', 'void')`))
    .addColumn('external_id', 'text', (c) => c.unique())
    .addColumn('hosted_url', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('paid_at', 'text')
    .addColumn('voided_at', 'text')
    .execute();
  await db.schema.createIndex('invoices_account_idx').on('invoices').columns(['account_id', 'created_at']).execute();
  await db.schema.createIndex('invoices_status_idx').on('invoices').columns(['status', 'created_at']).execute();

  // How a subscription is paid and what is pending on it. No row: made by the operator's CLI.
  await db.schema
    .createTable('subscription_billing')
    .addColumn('subscription_id', 'text', (c) => c.primaryKey().references('subscriptions.id'))
    .addColumn('provider', 'text', (c) => c.notNull().check(sql`provider in ('operator', 'manual', 'stripe')`))
    .addColumn('external_id', 'text', (c) => c.unique())
    .addColumn('cancel_at_period_end', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('scheduled_plan_code', 'text', (c) => c.references('plans.code'))
    // The end of the term paid for; ends_at may add a grace period for the provider's renewal charge.
    .addColumn('paid_through', 'text')
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('stripe_customers')
    .addColumn('account_id', 'text', (c) => c.primaryKey().references('accounts.id'))
    .addColumn('customer_id', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();

  // Providers deliver an event more than once; its id is recorded with its effects, once.
  await db.schema
    .createTable('webhook_events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('received_at', 'text', (c) => c.notNull())
    .execute();

  // A rotated token keeps working until expires_at; null means it does not expire.
  await db.schema.alterTable('api_tokens').addColumn('expires_at', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('api_tokens').dropColumn('expires_at').execute();
  for (const table of [
    'webhook_events',
    'stripe_customers',
    'subscription_billing',
    'invoices',
    'auth_attempts',
    'password_resets',
    'web_sessions',
    'account_passwords',
    'settings',
  ]) {
    await db.schema.dropTable(table).execute();
  }
}
