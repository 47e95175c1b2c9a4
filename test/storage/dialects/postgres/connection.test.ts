import { PostgresIntrospector, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest, openDatabase, type Db } from '../../../../src/storage/database.ts';
import { newTestSchemaName } from '../../../support/databases.ts';
import { TEST_POSTGRES_URL } from '../../../support/env.ts';

/** The introspection the migrator runs: the current schema's tables, as Kysely's own gives them. */
describe.runIf(TEST_POSTGRES_URL)('PostgreSQL introspection', () => {
  let ours: Db;
  let other: Db;
  let schema: string;

  beforeAll(async () => {
    schema = newTestSchemaName();
    ours = await openDatabase({ kind: 'postgres', url: TEST_POSTGRES_URL! }, { schema });
    other = await openDatabase({ kind: 'postgres', url: TEST_POSTGRES_URL! }, { schema: newTestSchemaName() });
    await migrateToLatest(ours);
    // Views, serial columns, comments and defaults, and a table of the other schema alone.
    await sql`create view lot_vins as select vin from lots`.execute(ours.kysely);
    await sql`create table counters (id serial primary key, label text default 'x')`.execute(ours.kysely);
    await sql`comment on column counters.label is 'what it counts'`.execute(ours.kysely);
    await sql`create table only_elsewhere (id integer)`.execute(other.kysely);
  });
  afterAll(async () => {
    await ours.close();
    await other.close();
  });

  it('gives the current schema\'s tables exactly as Kysely\'s introspector does, and no other schema\'s', async () => {
    for (const withInternalKyselyTables of [false, true]) {
      const everywhere = await new PostgresIntrospector(ours.kysely).getTables({ withInternalKyselyTables });
      const expected = everywhere.filter((table) => table.schema === schema);
      const found = await ours.kysely.introspection.getTables({ withInternalKyselyTables });
      expect(found).toEqual(expected);
      expect(found.map((table) => table.name)).not.toContain('only_elsewhere');
      expect(found.some((table) => table.name === 'kysely_migration')).toBe(withInternalKyselyTables);
    }
    const tables = await ours.kysely.introspection.getTables();
    expect(tables.find((table) => table.name === 'lot_vins')).toMatchObject({ isView: true, schema });
    expect(tables.find((table) => table.name === 'counters')!.columns).toEqual([
      { name: 'id', dataType: 'int4', dataTypeSchema: 'pg_catalog', isAutoIncrementing: true, isNullable: false, hasDefaultValue: true },
      { name: 'label', dataType: 'text', dataTypeSchema: 'pg_catalog', isAutoIncrementing: false, isNullable: true, hasDefaultValue: true, comment: 'what it counts' },
    ]);
    expect((await other.kysely.introspection.getTables()).map((table) => table.name)).toEqual(['only_elsewhere']);
  });

  it('the migrator finds its own tables in the current schema: a second run has nothing to do', async () => {
    expect((await migrateToLatest(ours)).results).toEqual([]);
  });
});
