import { sql, type Kysely } from 'kysely';

// Migrations take Kysely<any>: they describe the schema as it was when written, not today's types.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('plans')
    .addColumn('code', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('monthly_quota', 'integer', (c) => c.notNull().check(sql`monthly_quota > 0`))
    .addColumn('rate_per_second', 'integer', (c) => c.notNull().check(sql`rate_per_second > 0`))
    .addColumn('monthly_price_cents', 'integer', (c) => c.notNull().check(sql`monthly_price_cents >= 0`))
    .addColumn('annual_price_cents', 'integer', (c) => c.notNull().check(sql`annual_price_cents >= 0`))
    .addColumn('is_public', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('is_favourite', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('accounts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('email', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('subscriptions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('plan_code', 'text', (c) => c.notNull().references('plans.code'))
    .addColumn('billing', 'text', (c) => c.notNull().check(sql`billing in ('monthly', 'annual')`))
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('active', 'cancelled')`))
    .addColumn('started_at', 'text', (c) => c.notNull())
    .addColumn('ends_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('subscriptions_account_idx').on('subscriptions').columns(['account_id', 'started_at']).execute();

  await db.schema
    .createTable('api_tokens')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('display_prefix', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_used_at', 'text')
    .addColumn('revoked_at', 'text')
    .execute();
  await db.schema.createIndex('api_tokens_account_idx').on('api_tokens').column('account_id').execute();

  await db.schema
    .createTable('lots')
    .addColumn('auction', 'text', (c) => c.notNull())
    .addColumn('lot_id', 'integer', (c) => c.notNull())
    .addColumn('vin', 'text', (c) => c.notNull())
    .addColumn('body', 'text')
    .addColumn('fuel', 'text')
    .addColumn('keys', 'text')
    .addColumn('name', 'text')
    .addColumn('type', 'text')
    .addColumn('year', 'integer')
    .addColumn('brand', 'text')
    .addColumn('color', 'text')
    .addColumn('drive', 'text')
    .addColumn('model', 'text')
    .addColumn('price', 'integer')
    .addColumn('engine', 'text')
    .addColumn('document', 'text')
    .addColumn('location', 'text')
    .addColumn('odometer', 'integer')
    .addColumn('cylinders', 'integer')
    .addColumn('highlight', 'text')
    .addColumn('sale_date', 'text')
    .addColumn('repair_cost', 'integer')
    .addColumn('location_zip', 'text')
    .addColumn('retail_value', 'integer')
    .addColumn('transmission', 'text')
    .addColumn('configuration', 'text')
    .addColumn('odometer_type', 'text')
    .addColumn('primary_damage', 'text')
    .addColumn('secondary_damage', 'text')
    .addColumn('images', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('lots_pk', ['auction', 'lot_id'])
    .execute();
  // The search path: one B-tree probe on vin finds every lot of a vehicle, at any table size.
  await db.schema.createIndex('lots_vin_idx').on('lots').column('vin').execute();

  await db.schema
    .createTable('reports')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('vin', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('lots', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('reports_account_idx').on('reports').columns(['account_id', 'created_at']).execute();

  await db.schema
    .createTable('searches')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('token_id', 'text', (c) => c.notNull().references('api_tokens.id'))
    .addColumn('vin', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('outcome', 'text', (c) => c.notNull().check(sql`outcome in ('found', 'not_found')`))
    .addColumn('report_id', 'text', (c) => c.references('reports.id'))
    .addColumn('period_start', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('searches_account_idx').on('searches').columns(['account_id', 'created_at']).execute();

  await db.schema
    .createTable('usage_counters')
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('period_start', 'text', (c) => c.notNull())
    .addColumn('used', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('usage_counters_pk', ['account_id', 'period_start'])
    .execute();

  await db.schema
    .createTable('idempotency_keys')
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('vin', 'text', (c) => c.notNull())
    .addColumn('search_id', 'text', (c) => c.notNull().references('searches.id'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('idempotency_keys_pk', ['account_id', 'key'])
    .execute();
  await db.schema.createIndex('idempotency_keys_created_idx').on('idempotency_keys').column('created_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of [
    'idempotency_keys',
    'usage_counters',
    'searches',
    'reports',
    'lots',
    'api_tokens',
    'subscriptions',
    'accounts',
    'plans',
  ]) {
    await db.schema.dropTable(table).execute();
  }
}
