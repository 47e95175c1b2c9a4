import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { IngestService } from '../../src/ingest/ingest-service.ts';
import { migrateToLatest } from '../../src/storage/database.ts';
import { buildDeferredIndexes, deferLotsIndexesWhileEmpty } from '../../src/storage/deferred-indexes.ts';
import type { SourceRecord } from '../../src/ingest/sources/source-record.ts';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../support/databases.ts';
import { makeLot } from '../support/fixtures.ts';
import { randomVin } from './repositories/helpers.ts';

const owed = (t: TestDatabase) =>
  t.db.kysely.selectFrom('settings').select(['key', 'value']).where('key', 'like', 'deferred-index:%').orderBy('key').execute();

async function* records(count: number, options: { badAt?: number } = {}): AsyncGenerator<SourceRecord> {
  for (let i = 1; i <= count; i++) {
    // An object that is not a lot: the load's onRejected below throws on it, so the load fails half-way.
    yield { line: i, raw: i === options.badAt ? { not: 'a lot' } : makeLot({ vin: randomVin(), auction: 'copart', lot_id: 90_000_000 + i }) };
  }
}

describe.each(DIALECTS)('lots indexes built after a bulk load into an empty table (%s)', (dialect) => {
  let t: TestDatabase;
  let indexes: { name: string; definition: string }[];
  beforeEach(async () => {
    t = await createTestDatabase(dialect);
    indexes = await t.db.dialect.secondaryLotsIndexes(t.db.kysely);
  });
  afterEach(async () => {
    await t?.destroy();
  });

  it('knows the secondary indexes of lots, and not its primary key', () => {
    const names = indexes.map((index) => index.name);
    expect(names).toEqual(expect.arrayContaining(['lots_vin_idx', 'lots_market_idx', 'lots_sale_desc_idx', 'lots_sale_asc_idx']));
    expect(names.some((name) => /pk|pkey|autoindex/.test(name))).toBe(false);
  });

  it('drops them with their definitions recorded, and builds the same ones again', async () => {
    expect(await deferLotsIndexesWhileEmpty(t.db)).toBe(true);
    expect(await t.db.dialect.secondaryLotsIndexes(t.db.kysely)).toEqual([]);
    expect((await owed(t)).map((row) => row.key)).toEqual(indexes.map((index) => `deferred-index:${index.name}`));
    await t.repos.lots.upsertBatch([makeLot({ vin: randomVin(), auction: 'copart', lot_id: 1 })]);
    expect(await buildDeferredIndexes(t.db)).toEqual(indexes.map((index) => index.name));
    expect(await t.db.dialect.secondaryLotsIndexes(t.db.kysely)).toEqual(indexes);
    expect(await owed(t)).toEqual([]);
  });

  it('leaves the indexes of a table that has lots', async () => {
    await t.repos.lots.upsertBatch([makeLot({ vin: randomVin(), auction: 'copart', lot_id: 2 })]);
    expect(await deferLotsIndexesWhileEmpty(t.db)).toBe(false);
    expect(await t.db.dialect.secondaryLotsIndexes(t.db.kysely)).toEqual(indexes);
    expect(await owed(t)).toEqual([]);
  });

  it('builds them at the next start when the load died before it could', async () => {
    expect(await deferLotsIndexesWhileEmpty(t.db)).toBe(true);
    const vin = randomVin();
    await t.repos.lots.upsertBatch([makeLot({ vin, auction: 'copart', lot_id: 3 })]);
    // The process is gone: what the next start runs first.
    await migrateToLatest(t.db);
    expect(await t.db.dialect.secondaryLotsIndexes(t.db.kysely)).toEqual(indexes);
    expect(await owed(t)).toEqual([]);
    expect((await t.repos.lots.findByVin(vin)).map((lot) => lot.lot_id)).toEqual([3]);
  });

  it('a bulk load that asks for it stores every lot and ends with the indexes, also when it fails', async () => {
    const ingest = new IngestService(t.repos.lots, '/nonexistent');
    const summary = await ingest.importRecords(records(25), { bulkLoad: true, deferIndexes: true, batchSize: 10 });
    expect(summary.inserted).toBe(25);
    expect(await t.db.dialect.secondaryLotsIndexes(t.db.kysely)).toEqual(indexes);
    expect(await owed(t)).toEqual([]);

    const other = await createTestDatabase(dialect);
    try {
      const its = await other.db.dialect.secondaryLotsIndexes(other.db.kysely);
      const failing = new IngestService(other.repos.lots, '/nonexistent');
      await expect(
        failing.importRecords(records(25, { badAt: 15 }), {
          bulkLoad: true,
          deferIndexes: true,
          batchSize: 10,
          onRejected: () => {
            throw new Error('stop');
          },
        }),
      ).rejects.toThrow('stop');
      expect(await other.db.dialect.secondaryLotsIndexes(other.db.kysely)).toEqual(its);
      const { rows } = await sql<{ n: number | string }>`select count(*) as n from lots`.execute(other.db.kysely);
      expect(Number(rows[0]!.n)).toBe(10);
    } finally {
      await other.destroy();
    }
  });
});
