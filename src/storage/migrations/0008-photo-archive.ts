import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * The photo archive (docs/media.md). `media_images`: one row per image URL any lot named, queued
 * when the lot is stored, in the lot's order (the id), until its copy is archived; `media_objects`:
 * one row per distinct content (sha256), however many URLs share it. Same conventions as 0001.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  await db.schema
    .createTable('media_images')
    // The id orders the queue: a lot's images are inserted in its order, and claimed in id order.
    .addColumn('id', postgres ? 'serial' : 'integer', (c) => (postgres ? c.primaryKey() : c.primaryKey().autoIncrement()))
    .addColumn('url', 'text', (c) => c.notNull().unique())
    .addColumn('host', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull().check(sql`state in ('queued', 'archived', 'failed', 'removed')`))
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'text', (c) => c.notNull())
    .addColumn('lease_owner', 'text')
    .addColumn('lease_until', 'text')
    .addColumn('hash', 'text')
    .addColumn('ext', 'text')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  // The claim reads only work still to do, in queue order; archived rows (nearly all, in time) stay out of it.
  await db.schema
    .createIndex('media_images_pending_idx')
    .on('media_images')
    .column('id')
    .where(sql.ref('state'), 'in', sql`('queued', 'failed')`)
    .execute();
  await db.schema.createIndex('media_images_hash_idx').on('media_images').column('hash').execute();

  await db.schema
    .createTable('media_objects')
    .addColumn('hash', 'text', (c) => c.primaryKey())
    .addColumn('ext', 'text', (c) => c.notNull())
    .addColumn('content_type', 'text', (c) => c.notNull())
    .addColumn('bytes', 'integer', (c) => c.notNull())
    .addColumn('rendition_bytes', 'integer', (c) => c.notNull())
    .addColumn('width', 'integer', (c) => c.notNull())
    .addColumn('height', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('media_objects').execute();
  await db.schema.dropTable('media_images').execute();
}
