import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { createMigrator, openDatabase, type Db } from '../../../src/storage/database.ts';
import { SEARCHES_TABLES, searchesFileOf } from '../../../src/storage/dialects/sqlite/searches-file.ts';
import { inSearchesFile } from '../../../src/storage/migrations/0028-searches-file.ts';
import { createRepositories } from '../../../src/storage/repositories/index.ts';
import { createCustomer } from '../../support/fixtures.ts';

type Counts = Record<(typeof SEARCHES_TABLES)[number], number>;
const SEEDED: Counts = { usage_counters: 1, reports: 2, searches: 3, idempotency_keys: 1, batch_items: 2 };
const PERIOD = '2026-11-01T00:00:00.000Z';

/**
 * 0028 moves the tables a search's commit writes from the main file to the searches file, on a
 * database the previous migrations made, with its rows; and a move that stopped between its two
 * transactions (the copy committed, the drop not; or the drop committed, the record not) is
 * finished by the next start with no row lost or doubled.
 */
describe('migration 0028: the searches\' tables move to a file of their own (SQLite)', () => {
  let dir: string | null = null;
  let opened: Db | null = null;
  afterEach(async () => {
    await opened?.close();
    opened = null;
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = null;
  });

  async function open(file: string): Promise<Db> {
    await opened?.close();
    opened = await openDatabase({ kind: 'sqlite', file });
    return opened;
  }

  /** Up to 0028 and no further: later migrations are not this test's (a down must undo 0028 itself). */
  async function migrateTo0028(db: Db) {
    return (await createMigrator(db)).migrateTo('0028-searches-file');
  }

  async function close(): Promise<void> {
    await opened?.close();
    opened = null;
  }

  /** A database file made by the migrations before 0028, holding rows in every table that moves. */
  async function before0028(): Promise<{ file: string; accountId: string }> {
    dir = mkdtempSync(path.join(os.tmpdir(), 'vinhistory-0028-'));
    const file = path.join(dir, 'vinhistory.sqlite');
    const db = await open(file);
    const result = await (await createMigrator(db)).migrateTo('0027-catalogue-model-order');
    expect(result.error).toBeUndefined();
    const customer = await createCustomer(createRepositories(db));
    const at = '2026-11-20T10:00:00.000Z';
    const a = customer.accountId;
    const t = customer.tokenId;
    await sql`insert into usage_counters (account_id, period_start, used) values (${a}, ${PERIOD}, 3)`.execute(db.kysely);
    await sql`insert into reports (id, account_id, vin, created_at, lots, sandbox, token_id) values
      ('rep-1', ${a}, 'VIN1', ${at}, '[]', 0, ${t}), ('rep-2', ${a}, 'VIN2', ${at}, '[]', 1, ${t})`.execute(db.kysely);
    await sql`insert into searches (id, account_id, token_id, vin, created_at, outcome, report_id, period_start, sandbox, kind) values
      ('srch-1', ${a}, ${t}, 'VIN1', ${at}, 'found', 'rep-1', ${PERIOD}, 0, 'search'),
      ('srch-2', ${a}, ${t}, 'VIN2', ${at}, 'found', 'rep-2', ${PERIOD}, 1, 'lot'),
      ('srch-3', ${a}, ${t}, 'VIN3', ${at}, 'not_found', null, ${PERIOD}, 0, 'search')`.execute(db.kysely);
    await sql`insert into idempotency_keys (account_id, key, vin, search_id, created_at) values (${a}, 'key-1', 'VIN1', 'srch-1', ${at})`.execute(db.kysely);
    await sql`insert into batches (id, account_id, token_id, status, total, body_hash, created_at) values ('batch-1', ${a}, ${t}, 'done', 2, 'h', ${at})`.execute(db.kysely);
    await sql`insert into batch_items (batch_id, idx, input, status, report_id, finished_at) values
      ('batch-1', 0, '{"vin":"VIN1"}', 200, 'rep-1', ${at}), ('batch-1', 1, '{"vin":"VIN3"}', 404, null, ${at})`.execute(db.kysely);
    await close();
    return { file, accountId: a };
  }

  /** The two files read with nothing but SQLite: which of the tables each holds, and their rows. */
  function look(file: string): { main: string[]; searches: string[]; counts: Counts; rows: unknown[] } {
    const raw = new BetterSqlite3(file, { readonly: true });
    try {
      raw.prepare('attach database ? as searches').run(searchesFileOf(file));
      const tablesIn = (schema: string) =>
        (raw.prepare(`select name from ${schema}.sqlite_master where type = 'table'`).pluck().all() as string[]).filter((name) => (SEARCHES_TABLES as readonly string[]).includes(name)).sort();
      const counts = Object.fromEntries(SEARCHES_TABLES.map((table) => [table, Number(raw.prepare(`select count(*) from ${table}`).pluck().get())])) as Counts;
      const rows = SEARCHES_TABLES.flatMap((table) => raw.prepare(`select * from ${table} order by 1, 2`).all());
      return { main: tablesIn('main'), searches: tablesIn('searches'), counts, rows };
    } finally {
      raw.close();
    }
  }

  /** What 0028's first transaction commits (the searches file's tables, the rows copied), done by hand. */
  function copyOnly(file: string, thenDrop: boolean): void {
    const raw = new BetterSqlite3(file);
    try {
      raw.prepare('attach database ? as searches').run(searchesFileOf(file));
      raw.transaction(() => {
        for (const table of SEARCHES_TABLES) {
          const definitions = raw.prepare(`select type, sql from main.sqlite_master where tbl_name = ? and sql is not null order by type = 'index'`).all(table) as { sql: string }[];
          for (const { sql: definition } of definitions) raw.exec(inSearchesFile(definition));
          raw.exec(`insert into searches.${table} select * from main.${table}`);
        }
      })();
      if (thenDrop) raw.transaction(() => ['idempotency_keys', 'searches', 'reports', 'usage_counters', 'batch_items'].forEach((table) => raw.exec(`drop table main.${table}`)))();
    } finally {
      raw.close();
    }
  }

  it('moves every row of a database made by the previous migrations; indexes and the searches\' own foreign keys go with them; the service reads them', async () => {
    const { file, accountId } = await before0028();
    const was = look(file);
    expect(was.counts).toEqual(SEEDED);
    expect(was.searches).toEqual([]);

    const db = await open(file);
    const result = await migrateTo0028(db);
    expect(result.results?.map((r) => [r.migrationName, r.status])).toEqual([['0028-searches-file', 'Success']]);
    expect(await createRepositories(db).usageCounters.usedInPeriod(accountId, PERIOD)).toBe(3);
    await close();

    const now = look(file);
    expect(now.main).toEqual([]);
    expect(now.searches).toEqual([...SEARCHES_TABLES].sort());
    expect(now.rows).toEqual(was.rows);
    const raw = new BetterSqlite3(searchesFileOf(file), { readonly: true });
    try {
      expect((raw.prepare("select name from sqlite_master where type = 'index' and sql is not null").pluck().all() as string[]).sort()).toEqual([
        'batch_items_finished_idx',
        'idempotency_keys_created_idx',
        'reports_account_idx',
        'searches_account_idx',
      ]);
      // Foreign keys within the file stay; those to the main file's accounts, tokens and batches cannot be enforced across files and are gone.
      const parents = (table: string) => (raw.prepare(`select "table" from pragma_foreign_key_list(?)`).pluck().all(table) as string[]).sort();
      expect(SEARCHES_TABLES.map((table) => [table, parents(table)])).toEqual([
        ['usage_counters', []],
        ['reports', []],
        ['searches', ['reports']],
        ['idempotency_keys', ['searches']],
        ['batch_items', []],
      ]);
    } finally {
      raw.close();
    }
  });

  it('finishes a move that stopped after its copy committed: nothing doubled, nothing lost', async () => {
    const { file } = await before0028();
    const was = look(file);
    copyOnly(file, false);
    expect(look(file).main).toEqual([...SEARCHES_TABLES].sort());
    const result = await migrateTo0028(await open(file));
    expect(result.error).toBeUndefined();
    await close();
    const now = look(file);
    expect(now.main).toEqual([]);
    expect(now.counts).toEqual(SEEDED);
    expect(now.rows).toEqual(was.rows);
  });

  it('finishes a move that stopped after its drop committed, before it was recorded', async () => {
    const { file } = await before0028();
    const was = look(file);
    copyOnly(file, true);
    const result = await migrateTo0028(await open(file));
    expect(result.results?.map((r) => [r.migrationName, r.status])).toEqual([['0028-searches-file', 'Success']]);
    await close();
    expect(look(file).rows).toEqual(was.rows);
  });

  it('goes down with the rows, back into the main file', async () => {
    const { file } = await before0028();
    const was = look(file);
    const db = await open(file);
    await migrateTo0028(db);
    const down = await (await createMigrator(db)).migrateDown();
    expect(down.error).toBeUndefined();
    await close();
    const now = look(file);
    expect(now.searches).toEqual([]);
    expect(now.main).toEqual([...SEARCHES_TABLES].sort());
    expect(now.rows).toEqual(was.rows);
  });

  it('refuses to open a moved database whose searches file is missing, rather than answering from an empty one', async () => {
    const { file } = await before0028();
    await migrateTo0028(await open(file));
    await close();
    for (const name of [searchesFileOf(file), `${searchesFileOf(file)}-wal`, `${searchesFileOf(file)}-shm`]) rmSync(name, { force: true });
    await expect(openDatabase({ kind: 'sqlite', file })).rejects.toThrow(/searches file .* is missing or empty/);
  });
});
