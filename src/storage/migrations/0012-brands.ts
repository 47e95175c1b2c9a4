import type { Kysely } from 'kysely';

/**
 * White label: an account's brands. One of them may be the account's default (`is_default` = 1,
 * at most one per account, kept so by the service), the others named brands that a token can
 * carry (`api_tokens.brand_id`) for one of the reseller's sites. The logo is stored as the PNG the
 * service made of the upload, base64 in a text column (the same on both databases), found by the
 * hash of its bytes, which is also its address (`/report/brand/<hash>.png`).
 *
 * `reports.token_id` records which token made a report, so that a report page shows the brand of
 * that token; reports made before this migration have none and show the account's brand.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('brands')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('is_default', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('logo_hash', 'text')
    .addColumn('logo_png', 'text')
    .addColumn('accent', 'text')
    .addColumn('contact', 'text')
    .addColumn('report_base_url', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('brands_account_idx').on('brands').columns(['account_id', 'is_default']).execute();
  await db.schema.createIndex('brands_logo_idx').on('brands').column('logo_hash').execute();
  await db.schema.alterTable('api_tokens').addColumn('brand_id', 'text').execute();
  await db.schema.alterTable('reports').addColumn('token_id', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('reports').dropColumn('token_id').execute();
  await db.schema.alterTable('api_tokens').dropColumn('brand_id').execute();
  await db.schema.dropTable('brands').execute();
}
