import { sql } from 'kysely';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Db } from '../../src/storage/database.ts';
import { MAX_KEPT_NAMES } from '../../src/storage/dialects/postgres/direct-statements.ts';
import type { SqliteStorageDialect } from '../../src/storage/dialects/sqlite/index.ts';
import { PreparedQuery } from '../../src/storage/prepared-query.ts';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../support/databases.ts';

/** A query of the family the catalogue's pages are: one statement per shape, each kept by its owner. */
const shaped = (db: Db, shape: number) =>
  new PreparedQuery(db.kysely, ['n'], (p: { n: number }) => db.kysely.selectNoFrom(sql<number>`cast(${p.n} as integer) + ${sql.lit(shape)}`.as('n')));

describe.each(DIALECTS)('PreparedQuery.runKept on %s', (dialect) => {
  let t: TestDatabase | undefined;
  afterEach(async () => {
    await t?.destroy();
    t = undefined;
  });

  it('answers what execute answers, with each run its own parameters', async () => {
    t = await createTestDatabase(dialect);
    const query = shaped(t.db, 1_000);
    for (const n of [1, 2, 3]) {
      expect(await query.runKept(t.db, { n })).toEqual([{ n: n + 1_000 }]);
      expect(await query.runKept(t.db, { n })).toEqual(await query.execute(t.db.kysely, { n }));
    }
  });

  if (dialect === 'sqlite') {
    it('prepares a statement once per owner, and again for a new owner of the same text', async () => {
      t = await createTestDatabase(dialect);
      const raw = (t.db.dialect as SqliteStorageDialect).raw;
      const prepare = vi.spyOn(raw, 'prepare');
      const first = shaped(t.db, 7);
      for (let n = 0; n < 5; n++) await first.runKept(t.db, { n });
      expect(prepare).toHaveBeenCalledTimes(1);
      await shaped(t.db, 7).runKept(t.db, { n: 1 });
      expect(prepare).toHaveBeenCalledTimes(2);
      prepare.mockRestore();
    });

    it('inside a transaction open on the connection, runs through Kysely after it, not within it', async () => {
      t = await createTestDatabase(dialect);
      const { db } = t;
      const query = new PreparedQuery(db.kysely, ['auction'], (p: { auction: string }) => db.kysely.selectFrom('lots').select('lot_id').where('auction', '=', p.auction));
      const raw = (db.dialect as SqliteStorageDialect).raw;
      raw.prepare('begin').run();
      raw.prepare(`insert into lots (auction, lot_id, vin, created_at, updated_at) values ('kept', 1, '1HGCM82633A004352', 'x', 'x')`).run();
      expect(db.dialect.runKept(query, query.sql, ['kept'])).toBeNull();
      raw.prepare('rollback').run();
      expect(await query.runKept(db, { auction: 'kept' })).toEqual([]);
    });
  } else {
    it(`names the first ${MAX_KEPT_NAMES} texts only, and runs any other through Kysely`, async () => {
      t = await createTestDatabase(dialect);
      const { db } = t;
      const queries = Array.from({ length: MAX_KEPT_NAMES + 3 }, (_, i) => shaped(db, i));
      const runs = queries.map((query) => db.dialect.runKept(query, query.sql, [1]));
      // The budget is the pool's: this database's pool is new, so the first MAX_KEPT_NAMES are named.
      const firstUnnamed = runs.indexOf(null);
      expect(firstUnnamed).toBe(MAX_KEPT_NAMES);
      expect(runs.slice(firstUnnamed).every((run) => run === null)).toBe(true);
      expect(await runs[0]).toEqual([{ n: 1 }]);
      expect(await runs[1]).toEqual([{ n: 2 }]);
      // A text named before stays named (a new owner of it too), and every query still answers.
      const again = db.dialect.runKept(shaped(db, 0), queries[0]!.sql, [1]);
      expect(again).not.toBeNull();
      await again;
      for (const run of runs) if (run !== null) await run;
      for (const [i, query] of queries.entries()) expect(await query.runKept(db, { n: 5 })).toEqual([{ n: 5 + i }]);
    });
  }
});
