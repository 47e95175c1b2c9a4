import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Lot } from '../../src/domain/lot.ts';
import type { MarketOptions, MarketSubject } from '../../src/domain/market.ts';
import { MarketService } from '../../src/market/market-service.ts';
import { migrateToLatest, openDatabase, type Db, type DialectName } from '../../src/storage/database.ts';
import { createRepositories, type Repositories } from '../../src/storage/repositories/index.ts';
import { DIALECTS, newMigratedTestSchema } from '../support/databases.ts';
import { makeLot, validVin } from '../support/fixtures.ts';
import { Prng } from '../../src/dev/seed/prng.ts';

const AS_OF = new Date('2026-11-26T10:00:00.000Z');
const DAY = 86_400_000;

/** The seed's generator: the same random catalogue on both databases. */
function random(seed: number): () => number {
  const rng = new Prng(seed);
  return () => rng.next();
}

/** Two connections to one database (a file for SQLite, a schema for PostgreSQL): the second stands for another process. */
async function openTwice(dialect: DialectName): Promise<{ first: Db; second: Db; close: () => Promise<void> }> {
  if (dialect === 'sqlite') {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'market-cache-'));
    const file = path.join(dir, 'vinhistory.sqlite');
    const first = await openDatabase({ kind: 'sqlite', file });
    await migrateToLatest(first);
    const second = await openDatabase({ kind: 'sqlite', file });
    return { first, second, close: async () => { await second.close(); await first.close(); await rm(dir, { recursive: true, force: true }); } };
  }
  const schema = await newMigratedTestSchema();
  const url = process.env.TEST_POSTGRES_URL!;
  const first = await openDatabase({ kind: 'postgres', url }, { schema });
  const second = await openDatabase({ kind: 'postgres', url }, { schema });
  return { first, second, close: async () => { await second.close(); await first.close(); } };
}

const MODELS = [['HONDA', 'ACCORD'], ['Honda', 'Accord'], ['HONDA', 'CIVIC'], ['TOYOTA', 'CAMRY']] as const;
const SPELLINGS = ['FRONT END', 'Front end', 'front-end', 'REAR END', 'SIDE', 'HAIL', '--', null];

/** A random sale of one of four models, its sale date up to 40 months back (some in the future, some unpriced). */
function randomLot(next: () => number, i: number): Lot {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
  const [brand, model] = pick(MODELS);
  return makeLot({
    auction: pick(['copart', 'iaai']),
    lot_id: 10_000 + i,
    vin: validVin(`1HGCV1F3${String(i % 300).padStart(8, '0')}`),
    brand,
    model,
    year: 2016 + Math.floor(next() * 7),
    price: next() < 0.1 ? pick([null, 0]) : next() < 0.4 ? pick([1000, 2500, 4100]) : 100 + Math.floor(next() * 20_000),
    retail_value: next() < 0.2 ? pick([null, 0]) : pick([5000, 10_000, 5000 + Math.floor(next() * 40_000)]),
    primary_damage: pick(SPELLINGS),
    odometer: next() < 0.15 ? null : pick([40_000, 41_000, Math.floor(next() * 200_000)]),
    sale_date: next() < 0.05 ? null : new Date(AS_OF.getTime() + 20 * DAY - Math.floor(next() * 1220 * DAY) - Math.floor(next() * 24) * 3_600_000).toISOString(),
  });
}

/** What the market answers with its comparables cached, beside what it answers reading them each call. */
async function bothAnswers(cached: MarketService, uncached: MarketService, subject: MarketSubject, options: MarketOptions) {
  return { cached: await cached.valueFor(subject, options), uncached: await uncached.valueFor(subject, options) };
}

describe.each(DIALECTS)('the market cache on %s', (dialect) => {
  let dbs: Awaited<ReturnType<typeof openTwice>>;
  let repos: Repositories;
  let other: Repositories;
  let cached: MarketService;
  let uncached: MarketService;
  const lots: Lot[] = [];
  const next = random(7);

  beforeAll(async () => {
    dbs = await openTwice(dialect);
    repos = createRepositories(dbs.first);
    other = createRepositories(dbs.second);
    cached = new MarketService({ repos });
    uncached = new MarketService({ repos, cacheMaxBytes: 0 });
    for (let i = 0; i < 1500; i++) lots.push(randomLot(next, i));
    // In batches, as an import stores them: each batch bumps the groups it writes.
    for (let start = 0; start < lots.length; start += 500) await repos.lots.upsertBatch(lots.slice(start, start + 500));
  });
  afterAll(async () => {
    await dbs?.close();
  });

  it('answers exactly what reading the comparables each call answers, on random data', async () => {
    const vins = [...new Set(lots.map((lot) => lot.vin))].slice(0, 40);
    let compared = 0;
    for (const months of [12, 1, 36]) {
      for (const damage of [null, 'front end', 'HAIL']) {
        for (const vin of vins) {
          const { cached: a, uncached: b } = await bothAnswers(cached, uncached, { kind: 'vin', vin }, { primaryDamage: damage, months, asOf: AS_OF });
          expect(a).toEqual(b);
          compared += a?.comparables.count ?? 0;
        }
        const { cached: a, uncached: b } = await bothAnswers(cached, uncached, { kind: 'vehicle', make: 'honda', model: 'ACCORD', year: 2019 }, { primaryDamage: damage, months, asOf: AS_OF });
        expect(a).toEqual(b);
      }
    }
    expect(compared).toBeGreaterThan(1000);
    // A window ending mid-day, mid-month: the edge months' sales are filtered by the exact bounds.
    const asOf = new Date('2025-06-15T13:27:00.000Z');
    for (const vin of vins.slice(0, 10)) {
      const { cached: a, uncached: b } = await bothAnswers(cached, uncached, { kind: 'vin', vin }, { primaryDamage: null, months: 12, asOf });
      expect(a).toEqual(b);
    }
  });

  it('sees what an import changes at the next call: a price, a sale date moved to another month, a model, a new sale', async () => {
    const subject: MarketSubject = { kind: 'vehicle', make: 'Honda', model: 'Accord', year: 2020 };
    const options: MarketOptions = { primaryDamage: null, months: 12, asOf: AS_OF };
    const expectFresh = async () => {
      const { cached: a, uncached: b } = await bothAnswers(cached, uncached, subject, options);
      expect(a).toEqual(b);
      return a!;
    };
    const start = await expectFresh();
    const target = lots.find((lot) => lot.year === 2020 && lot.model?.toUpperCase() === 'ACCORD' && lot.price !== null && lot.price > 0 && lot.sale_date !== null && lot.sale_date > '2026-03-01' && lot.sale_date < AS_OF.toISOString())!;
    expect(target).toBeDefined();

    await repos.lots.upsertBatch([{ ...target, price: 987_654 }]);
    const priced = await expectFresh();
    expect(priced.comparables.price.max).toBe(987_654);
    expect(priced.comparables.count).toBe(start.comparables.count);

    // Another month of the window, then out of it: the lot leaves one group for another, then the window.
    await repos.lots.upsertBatch([{ ...target, price: 987_654, sale_date: '2026-01-02T03:04:05.000Z' }]);
    const moved = await expectFresh();
    expect(moved.by_month.find((month) => month.month === '2026-01')!.count).toBe(start.by_month.find((month) => month.month === '2026-01')!.count + 1);
    await repos.lots.upsertBatch([{ ...target, price: 987_654, sale_date: '2024-01-02T03:04:05.000Z' }]);
    expect((await expectFresh()).comparables.count).toBe(start.comparables.count - 1);

    await repos.lots.upsertBatch([{ ...target, sale_date: target.sale_date, model: 'CIVIC' }]);
    expect((await expectFresh()).comparables.count).toBe(start.comparables.count - 1);
    await repos.lots.upsertBatch([{ ...target, model: 'ACCORD' }]);
    expect((await expectFresh()).comparables.count).toBe(start.comparables.count);

    // A year known only from the VIN's decoding (a derived value) enters the lot into the year's group.
    const yearless = makeLot({ auction: 'iaai', lot_id: 99_003, vin: validVin('1HGCV1F3000000003'), brand: 'HONDA', model: 'ACCORD', year: null, price: 2, sale_date: '2026-10-10T00:00:00.000Z' });
    await repos.lots.upsertBatch([yearless]);
    expect((await expectFresh()).comparables.count).toBe(start.comparables.count);
    await repos.lots.upsertBatch([{ ...yearless, derived: { year: 2020 } }]);
    const derived = await expectFresh();
    expect(derived.comparables.count).toBe(start.comparables.count + 1);
    expect(derived.comparables.price.min).toBe(2);

    const fresh = makeLot({ auction: 'copart', lot_id: 99_001, vin: validVin('5YJSA1E2000000001'), brand: 'HONDA', model: 'ACCORD', year: 2021, price: 1, retail_value: 100, sale_date: '2026-11-20T00:00:00.000Z' });
    await repos.lots.upsertBatch([fresh]);
    const added = await expectFresh();
    expect(added.comparables.count).toBe(start.comparables.count + 2);
    expect(added.comparables.price.min).toBe(1);
  });

  it("sees another process's import", async () => {
    const subject: MarketSubject = { kind: 'vehicle', make: 'Toyota', model: 'Camry', year: 2018 };
    const options: MarketOptions = { primaryDamage: null, months: 12, asOf: AS_OF };
    const before = (await cached.valueFor(subject, options))!;
    await other.lots.upsertBatch([makeLot({ auction: 'iaai', lot_id: 99_002, vin: validVin('4T1BF1FK0000000002'), brand: 'TOYOTA', model: 'CAMRY', year: 2018, price: 3_000_000, sale_date: '2026-10-01T12:00:00.000Z' })]);
    const after = (await cached.valueFor(subject, options))!;
    expect(after.comparables.count).toBe(before.comparables.count + 1);
    expect(after.comparables.price.max).toBe(3_000_000);
    expect(after).toEqual(await uncached.valueFor(subject, options));
  });

  it('sees a first bulk load (the epoch) and evicts past its bound', async () => {
    const fresh = await openTwice(dialect);
    try {
      const loader = createRepositories(fresh.second);
      const kept = new MarketService({ repos: createRepositories(fresh.first) });
      const small = new MarketService({ repos: createRepositories(fresh.first), cacheMaxBytes: 20_000 });
      const reference = new MarketService({ repos: createRepositories(fresh.first), cacheMaxBytes: 0 });
      const subject: MarketSubject = { kind: 'vehicle', make: 'Honda', model: 'Accord', year: 2019 };
      const options: MarketOptions = { primaryDamage: null, months: 36, asOf: AS_OF };
      expect((await kept.valueFor(subject, options))!.comparables.count).toBe(0);
      expect(await loader.lots.deferIndexesWhileEmpty()).toBe(true);
      try {
        await loader.lots.upsertBatch(lots);
      } finally {
        await loader.lots.buildDeferredIndexes();
      }
      const loaded = await kept.valueFor(subject, options);
      expect(loaded!.comparables.count).toBeGreaterThan(0);
      expect(loaded).toEqual(await reference.valueFor(subject, options));
      expect(kept.cache!.counts.evicted).toBe(0);
      for (const year of [2016, 2018, 2020, 2022]) {
        const other = { ...subject, year };
        expect(await small.valueFor(other, options)).toEqual(await reference.valueFor(other, options));
      }
      expect(small.cache!.counts.evicted).toBeGreaterThan(0);
      expect(small.cache!.size).toBeLessThanOrEqual(20_000);
    } finally {
      await fresh.close();
    }
  });
});
