import { sql, type Kysely } from 'kysely';
import type { Database } from '../../schema.ts';
import type { IndexDefinition } from '../dialect.ts';

/** SQLite: the lots table's indexes that are neither its primary key nor unique, each with the statement that made it. */
export async function secondaryLotsIndexesSqlite(kysely: Kysely<Database>): Promise<IndexDefinition[]> {
  const { rows } = await sql<IndexDefinition>`select name, sql as definition from sqlite_master
    where type = 'index' and tbl_name = 'lots' and sql is not null and sql not like 'create unique%' order by name`.execute(kysely);
  return rows;
}

/** SQLite: whether an index of this name exists (on any table). */
export async function indexExistsSqlite(kysely: Kysely<Database>, name: string): Promise<boolean> {
  const { rows } = await sql<{ found: number }>`select 1 as found from sqlite_master where type = 'index' and name = ${name}`.execute(kysely);
  return rows.length > 0;
}

/** SQLite: the recorded statement as it is (its sort uses the connection's cache and temp store). */
export async function buildIndexSqlite(kysely: Kysely<Database>, definition: string): Promise<void> {
  await sql.raw(definition).execute(kysely);
}
