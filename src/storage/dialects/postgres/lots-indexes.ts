import { sql, type Kysely } from 'kysely';
import type { Database } from '../../schema.ts';
import type { IndexDefinition } from '../dialect.ts';

/**
 * PostgreSQL: the lots table's indexes that are neither its primary key nor unique, each with the
 * statement that makes it again (pg_get_indexdef: schema-qualified, so it rebuilds in the schema it was in).
 */
export async function secondaryLotsIndexesPostgres(kysely: Kysely<Database>): Promise<IndexDefinition[]> {
  const { rows } = await sql<IndexDefinition>`select c.relname as name, pg_get_indexdef(i.indexrelid) as definition
    from pg_index i join pg_class c on c.oid = i.indexrelid
    where i.indrelid = 'lots'::regclass and not i.indisunique and not i.indisprimary order by c.relname`.execute(kysely);
  return rows;
}

/** PostgreSQL: whether an index of this name exists in the schemas the connection sees. */
export async function indexExistsPostgres(kysely: Kysely<Database>, name: string): Promise<boolean> {
  const { rows } = await sql<{ found: number }>`select 1 as found from pg_class where relkind = 'i' and relname = ${name} and pg_table_is_visible(oid)`.execute(kysely);
  return rows.length > 0;
}

/** PostgreSQL: an index built over the whole table sorts in memory when it may (the default 64 MB spills to disk at 1M lots). */
export async function buildIndexPostgres(kysely: Kysely<Database>, definition: string): Promise<void> {
  await sql`set local maintenance_work_mem = '256MB'`.execute(kysely);
  await sql.raw(definition).execute(kysely);
}
