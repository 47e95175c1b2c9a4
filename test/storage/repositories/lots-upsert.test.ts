import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Lot } from '../../../src/domain/lot.ts';
import { LOT_FIELDS } from '../../../src/domain/lot.ts';
import { Prng } from '../../../src/dev/seed/prng.ts';
import { LotsRepository } from '../../../src/storage/repositories/lots-repository.ts';
import { mergeLot } from '../../../src/storage/lot-rows.ts';
import { marketKey } from '../../../src/domain/market-key.ts';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../../support/databases.ts';
import { makeLot, validVin } from '../../support/fixtures.ts';

let lotCounter = 0;
const nextLotId = () => 70_000_000 + ++lotCounter;

const VIN_POOL = [validVin('1HGCM82633A00435'), validVin('5YJ3E1EA7KF31740'), validVin('1FTEW1EP1JFA6021')];
const TEXTS = ['A', 'B', ''];
const IMAGES = [[], ['https://img.example.com/1.jpg'], ['https://img.example.com/1.jpg', 'https://img.example.com/2.jpg']];

/** A lot whose fields are each null, or one of two or three values, so that merges often meet equal values. */
function randomLot(rng: Prng, key: { auction: string; lot_id: number }): Lot {
  const lot = makeLot({ vin: rng.pick(VIN_POOL), ...key });
  for (const field of LOT_FIELDS) {
    if (field === 'vin' || field === 'auction' || field === 'lot_id') continue;
    if (field === 'images') {
      lot.images = [...rng.pick(IMAGES)];
      continue;
    }
    if (rng.chance(0.4)) continue; // stays null
    const record = lot as Record<string, unknown>;
    if (field === 'sale_date') record[field] = rng.pick(['2024-05-17T15:00:00.000Z', '2021-01-01T00:00:00.000Z']);
    else if (['year', 'price', 'odometer', 'cylinders', 'repair_cost', 'retail_value'].includes(field)) record[field] = rng.pick([0, 2010, 2011]);
    else record[field] = rng.pick(TEXTS);
  }
  return lot;
}

/** The stored lot with some fields left unknown: a thinner feed that changes nothing. */
function thinned(rng: Prng, lot: Lot): Lot {
  const copy = { ...lot, images: rng.chance(0.5) ? [] : [...lot.images] } as Record<string, unknown>;
  for (const field of LOT_FIELDS) if (!['vin', 'auction', 'lot_id', 'images'].includes(field) && rng.chance(0.5)) copy[field] = null;
  return copy as Lot;
}

describe.each(DIALECTS)('LotsRepository.upsertBatch in SQL (%s)', (dialect) => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase(dialect);
  });
  afterAll(async () => {
    await t?.destroy();
  });

  it('merges exactly as mergeLot says, and counts exactly what changed', async () => {
    const rng = new Prng(dialect === 'sqlite' ? 11 : 12);
    const pairs = Array.from({ length: 300 }, () => {
      const key = { auction: rng.pick(['copart', 'iaai']), lot_id: nextLotId() };
      const stored = randomLot(rng, key);
      return { stored, incoming: rng.chance(0.25) ? thinned(rng, stored) : randomLot(rng, key) };
    });
    expect(await t.repos.lots.upsertBatch(pairs.map((p) => p.stored))).toEqual({ inserted: 300, updated: 0, unchanged: 0 });
    const expected = pairs.map((p) => mergeLot(p.stored, p.incoming));
    const summary = await t.repos.lots.upsertBatch(pairs.map((p) => p.incoming));
    expect(summary).toEqual({
      inserted: 0,
      updated: expected.filter((merged) => merged !== null).length,
      unchanged: expected.filter((merged) => merged === null).length,
    });
    expect(summary.updated).toBeGreaterThan(50);
    expect(summary.unchanged).toBeGreaterThan(0);
    for (const [i, pair] of pairs.entries()) {
      const want = expected[i] ?? pair.stored;
      const found = (await t.repos.lots.findByVin(want.vin)).find((lot) => lot.auction === want.auction && lot.lot_id === want.lot_id);
      expect(found, `pair ${i}`).toEqual(want);
    }
    // The market keys (0018) follow their source values whichever way a changed row is written.
    const rows = await t.db.kysely
      .selectFrom('lots')
      .select(['lot_id', 'brand', 'model', 'primary_damage', 'make_key', 'model_key', 'damage_key'])
      .where('lot_id', 'in', pairs.map((pair) => pair.stored.lot_id))
      .execute();
    expect(rows).toHaveLength(pairs.length);
    for (const row of rows) {
      expect([row.make_key, row.model_key, row.damage_key], `lot ${row.lot_id}`).toEqual([marketKey(row.brand), marketKey(row.model), marketKey(row.primary_damage)]);
    }
  });

  it('fills derived values only where the lot and the stored row both have nothing', async () => {
    const vin = VIN_POOL[0]!;
    const stored = makeLot({ vin, lot_id: nextLotId(), brand: 'MERCEDES-BENZ', year: 2010 });
    await t.repos.lots.upsertBatch([stored]);
    const thin = makeLot({ vin, lot_id: stored.lot_id, odometer: 5 });
    const derived = { brand: 'Mercedes-Benz', model: 'GL-Class', year: 2011, cylinders: 8 };
    expect(await t.repos.lots.upsertBatch([{ ...thin, derived }])).toEqual({ inserted: 0, updated: 1, unchanged: 0 });
    const [found] = (await t.repos.lots.findByVin(vin)).filter((lot) => lot.lot_id === stored.lot_id);
    // A source's brand and year stay; the gaps are filled.
    expect(found).toMatchObject({ brand: 'MERCEDES-BENZ', year: 2010, model: 'GL-Class', cylinders: 8, odometer: 5 });

    // Nothing left to fill: unchanged, and updated_at does not move.
    expect(await t.repos.lots.upsertBatch([{ ...thin, derived }])).toEqual({ inserted: 0, updated: 0, unchanged: 1 });
    // A derived value only fills: the next source value replaces it as any value.
    expect(await t.repos.lots.upsertBatch([{ ...thin, model: 'GL 450' }])).toEqual({ inserted: 0, updated: 1, unchanged: 0 });

    // A new lot: inserted (not updated), with its gaps filled.
    const fresh = makeLot({ vin, lot_id: nextLotId(), brand: 'MERCEDES-BENZ' });
    expect(await t.repos.lots.upsertBatch([{ ...fresh, derived }, makeLot({ vin, lot_id: nextLotId() })])).toEqual({
      inserted: 2,
      updated: 0,
      unchanged: 0,
    });
    const [filled] = (await t.repos.lots.findByVin(vin)).filter((lot) => lot.lot_id === fresh.lot_id);
    expect(filled).toMatchObject({ brand: 'MERCEDES-BENZ', model: 'GL-Class', year: 2011, cylinders: 8 });
  });

  it('takes part in a transaction of the caller, and rolls back with it', async () => {
    const lot = makeLot({ vin: VIN_POOL[1]!, lot_id: nextLotId() });
    const failure = await t.db.kysely
      .transaction()
      .execute(async (trx) => {
        const inTransaction = new LotsRepository({ ...t.db, kysely: trx });
        expect(await inTransaction.upsertBatch([lot])).toEqual({ inserted: 1, updated: 0, unchanged: 0 });
        throw new Error('roll back');
      })
      .catch((error: Error) => error.message);
    expect(failure).toBe('roll back');
    expect((await t.repos.lots.findByVin(lot.vin)).some((found) => found.lot_id === lot.lot_id)).toBe(false);
  });
});

describe.runIf(DIALECTS.includes('postgres'))('LotsRepository.upsertBatch under concurrency (postgres)', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase('postgres', { maxConnections: 4 });
  });
  afterAll(async () => {
    await t?.destroy();
  });

  it('two imports writing the same new lots at once both succeed: the second merges into the first', async () => {
    const vin = VIN_POOL[2]!;
    const lots = Array.from({ length: 20 }, () => makeLot({ vin, lot_id: nextLotId(), price: 1 }));
    let second: Promise<unknown> | null = null;
    await t.db.kysely.transaction().execute(async (trx) => {
      const first = new LotsRepository({ ...t.db, kysely: trx });
      expect(await first.upsertBatch(lots)).toEqual({ inserted: 20, updated: 0, unchanged: 0 });
      // The second import writes the same lots (one of them changed) while the first has not
      // committed: its statement waits on the first one's rows.
      second = t.repos.lots.upsertBatch(lots.map((lot, i) => (i === 0 ? { ...lot, price: 2 } : lot)));
      await new Promise((resolve) => setTimeout(resolve, 300));
    });
    expect(await (second as Promise<unknown> | null)).toEqual({ inserted: 0, updated: 1, unchanged: 19 });
    const stored = await t.repos.lots.findByVin(vin);
    expect(stored).toHaveLength(20);
    expect(stored.find((lot) => lot.lot_id === lots[0]!.lot_id)?.price).toBe(2);
  });
});
