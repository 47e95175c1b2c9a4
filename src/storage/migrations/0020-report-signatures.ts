import type { Kysely } from 'kysely';

/**
 * Verifiable reports (issue 29): the service's Ed25519 signing keys, the private half sealed like
 * webhook secrets (webhooks/secret-box.ts), every key kept after a rotation so that earlier
 * signatures still verify; and each report's signature, made the first time it is asked for (the
 * search's commit pays nothing for it) and kept, so that the signed bytes never change.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('signing_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('public_jwk', 'text', (c) => c.notNull())
    .addColumn('private_sealed', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('signing_keys_created_idx').on('signing_keys').columns(['created_at', 'id']).execute();
  await db.schema
    .createTable('report_signatures')
    .addColumn('report_id', 'text', (c) => c.primaryKey())
    .addColumn('key_id', 'text', (c) => c.notNull())
    .addColumn('issuer', 'text', (c) => c.notNull())
    .addColumn('issued_at', 'text', (c) => c.notNull())
    .addColumn('signature', 'text', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('report_signatures').execute();
  await db.schema.dropTable('signing_keys').execute();
}
