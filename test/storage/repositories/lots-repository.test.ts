import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { lotJson, LOT_FIELDS, type Lot } from '../../../src/domain/lot.ts';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../../support/databases.ts';
import { makeLot } from '../../support/fixtures.ts';
import { randomVin } from './helpers.ts';

let lotCounter = 0;
/** Lot ids unique within the file, so tests sharing the database never meet. */
const nextLotId = () => 40_000_000 + ++lotCounter;

function fullLot(vin: string, overrides: Partial<Lot> = {}): Lot {
  return {
    vin,
    body: 'SEDAN 4D',
    fuel: 'GAS',
    keys: 'YES',
    name: '2010 MERCEDES-BENZ ML 350 4MATIC',
    type: 'AUTOMOBILE',
    year: 2010,
    brand: 'MERCEDES-BENZ',
    color: 'BLACK',
    drive: 'ALL WHEEL DRIVE',
    model: 'ML 350',
    price: 4_250,
    engine: '3.5L 6',
    lot_id: nextLotId(),
    auction: 'copart',
    document: 'SALVAGE CERTIFICATE',
    location: 'DALLAS',
    odometer: 123_456,
    cylinders: 6,
    highlight: 'RUN AND DRIVE',
    sale_date: '2024-05-17T15:00:00.000Z',
    repair_cost: 7_800,
    location_zip: '75201',
    retail_value: 11_900,
    transmission: 'AUTOMATIC',
    configuration: '4MATIC',
    odometer_type: 'ACTUAL',
    primary_damage: 'FRONT END',
    secondary_damage: 'SIDE',
    images: ['https://img.example.com/a/1.jpg', 'https://img.example.com/a/2.jpg'],
    ...overrides,
  };
}

describe.each(DIALECTS)('LotsRepository (%s)', (dialect) => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase(dialect);
  });
  afterAll(async () => {
    await t?.destroy();
  });

  describe('findJsonByVin', () => {
    test('each lot is its JSON text as the database writes it: the lot itself, fields in the spec order, newest sale first', async () => {
      const vin = randomVin();
      const lots = [
        fullLot(vin, { sale_date: '2021-01-01T00:00:00.000Z' }),
        // Every kind of value a text may hold: quotes, backslashes, control characters, non-ASCII.
        fullLot(vin, { sale_date: '2024-05-17T15:00:00.000Z', name: 'Quote " back\\slash \u0001 tab\t ünï 汽车 😀', images: [] }),
        fullLot(vin, { sale_date: null, keys: null, year: null, price: null, odometer: 0, images: ['https://img.example.com/q?a=1&b="2"'] }),
        fullLot(vin, { sale_date: '2024-05-17T15:00:00.000Z', auction: 'iaai' }),
      ];
      await t.repos.lots.upsertBatch(lots);
      const { lots: texts, named } = await t.repos.lots.findJsonByVin(vin);
      const parsed = texts.map((text) => JSON.parse(text) as Lot);
      // The same lots in the same order, each with its count of versions (none yet: each was imported once).
      expect(named).toEqual(parsed.map((lot) => ({ auction: lot.auction, lot_id: lot.lot_id, versions: 0 })));
      expect(parsed).toEqual(await t.repos.lots.findByVin(vin));
      expect(parsed.map((lot) => [lot.sale_date, lot.auction])).toEqual([
        ['2024-05-17T15:00:00.000Z', 'copart'],
        ['2024-05-17T15:00:00.000Z', 'iaai'],
        ['2021-01-01T00:00:00.000Z', 'copart'],
        [null, 'copart'],
      ]);
      for (const text of texts) expect(Object.keys(JSON.parse(text))).toEqual(LOT_FIELDS);
      // The same text a lot object gives (lotJson), so that a snapshot reads the same whichever wrote it.
      for (const [i, text] of texts.entries()) expect(text).toBe(lotJson(parsed[i]!));
    });

    test('an unknown VIN has none', async () => {
      expect(await t.repos.lots.findJsonByVin(randomVin())).toEqual({ lots: [], named: [] });
    });
  });

  describe('findByVin', () => {
    test('an unknown VIN has no lots', async () => {
      expect(await t.repos.lots.findByVin(randomVin())).toEqual([]);
    });

    test('a lot comes back exactly as it was stored, every field present', async () => {
      const lot = fullLot(randomVin());
      await t.repos.lots.upsertBatch([lot]);
      const [found, ...rest] = await t.repos.lots.findByVin(lot.vin);
      expect(rest).toEqual([]);
      expect(found).toEqual(lot);
      expect(Object.keys(found!)).toEqual(Object.keys(lot));

      const sparse = makeLot({ vin: randomVin(), lot_id: nextLotId() });
      await t.repos.lots.upsertBatch([sparse]);
      expect(await t.repos.lots.findByVin(sparse.vin)).toEqual([sparse]);
    });

    test('newest sale first, unknown sale dates last, ties by auction then lot id (descending)', async () => {
      const vin = randomVin();
      const lot = (auction: string, sale_date: string | null) => makeLot({ vin, auction, sale_date, lot_id: nextLotId() });
      const old = lot('copart', '2019-03-01T00:00:00.000Z');
      const undatedA = lot('copart', null);
      const newest = lot('iaai', '2024-11-30T18:30:00.000Z');
      const undatedB = lot('iaai', null);
      const middle = lot('copart', '2022-07-15T12:00:00.000Z');
      const sameDayIaai = lot('iaai', '2022-07-15T12:00:00.000Z');
      const sameDayCopartLower = makeLot({ vin, auction: 'copart', sale_date: '2022-07-15T12:00:00.000Z', lot_id: 1 });
      await t.repos.lots.upsertBatch([old, undatedA, newest, sameDayCopartLower, undatedB, middle, sameDayIaai]);
      await t.repos.lots.upsertBatch([makeLot({ vin: randomVin(), sale_date: '2030-01-01T00:00:00.000Z' })]);

      const found = await t.repos.lots.findByVin(vin);
      expect(found.map((l) => [l.auction, l.lot_id])).toEqual(
        [newest, middle, sameDayCopartLower, sameDayIaai, old, undatedA, undatedB].map((l) => [l.auction, l.lot_id]),
      );
    });

    test('the VIN must match exactly', async () => {
      const vin = randomVin();
      await t.repos.lots.upsertBatch([makeLot({ vin, lot_id: nextLotId() })]);
      expect(await t.repos.lots.findByVin(vin.toLowerCase())).toEqual([]);
      expect(await t.repos.lots.findByVin(vin.slice(0, 16))).toEqual([]);
      expect(await t.repos.lots.findByVin(`${vin.slice(0, 16)}%`)).toEqual([]);
    });
  });

  describe('upsertBatch', () => {
    test('an empty batch does nothing', async () => {
      expect(await t.repos.lots.upsertBatch([])).toEqual({ inserted: 0, updated: 0, unchanged: 0 });
    });

    test('counts inserted, updated and unchanged lots, and count() follows', async () => {
      const before = await t.repos.lots.count();
      const vin = randomVin();
      const a = fullLot(vin);
      const b = fullLot(vin, { auction: 'iaai' });
      const c = makeLot({ vin, lot_id: nextLotId() });
      expect(await t.repos.lots.upsertBatch([a, b, c])).toEqual({ inserted: 3, updated: 0, unchanged: 0 });
      expect(await t.repos.lots.count()).toBe(before + 3);

      expect(await t.repos.lots.upsertBatch([a, b, c])).toEqual({ inserted: 0, updated: 0, unchanged: 3 });
      const d = makeLot({ vin, lot_id: nextLotId() });
      expect(await t.repos.lots.upsertBatch([{ ...a, price: 5_000 }, b, d])).toEqual({ inserted: 1, updated: 1, unchanged: 1 });
      expect(await t.repos.lots.count()).toBe(before + 4);
      const stored = await t.repos.lots.findByVin(vin);
      expect(stored.find((l) => l.lot_id === a.lot_id && l.auction === 'copart')?.price).toBe(5_000);
    });

    test('the key is (auction, lot_id): the same lot id at two auctions is two lots', async () => {
      const vin = randomVin();
      const lotId = nextLotId();
      const summary = await t.repos.lots.upsertBatch([
        makeLot({ vin, auction: 'copart', lot_id: lotId, price: 1 }),
        makeLot({ vin, auction: 'iaai', lot_id: lotId, price: 2 }),
      ]);
      expect(summary).toEqual({ inserted: 2, updated: 0, unchanged: 0 });
      expect((await t.repos.lots.findByVin(vin)).map((l) => [l.auction, l.price]).sort()).toEqual([['copart', 1], ['iaai', 2]]);
    });

    test('merge rule: a null or an empty image list in the incoming lot keeps the stored value', async () => {
      const rich = fullLot(randomVin());
      await t.repos.lots.upsertBatch([rich]);
      const thin = makeLot({ vin: rich.vin, auction: rich.auction, lot_id: rich.lot_id });
      expect(await t.repos.lots.upsertBatch([thin])).toEqual({ inserted: 0, updated: 0, unchanged: 1 });
      expect(await t.repos.lots.findByVin(rich.vin)).toEqual([rich]);

      // A given value replaces, a missing one keeps: only odometer and images change.
      const newer = makeLot({
        vin: rich.vin, auction: rich.auction, lot_id: rich.lot_id,
        odometer: 130_000, images: ['https://img.example.com/b/1.jpg'],
      });
      expect(await t.repos.lots.upsertBatch([newer])).toEqual({ inserted: 0, updated: 1, unchanged: 0 });
      expect(await t.repos.lots.findByVin(rich.vin)).toEqual([{ ...rich, odometer: 130_000, images: ['https://img.example.com/b/1.jpg'] }]);

      // Zero and the empty string are values, not unknowns.
      const zero = makeLot({ vin: rich.vin, auction: rich.auction, lot_id: rich.lot_id, price: 0, highlight: '' });
      expect(await t.repos.lots.upsertBatch([zero])).toEqual({ inserted: 0, updated: 1, unchanged: 0 });
      const [stored] = await t.repos.lots.findByVin(rich.vin);
      expect(stored).toMatchObject({ price: 0, highlight: '', odometer: 130_000, repair_cost: rich.repair_cost });
    });

    test('a lot that moves to another VIN is found under the new one only', async () => {
      const lot = makeLot({ vin: randomVin(), lot_id: nextLotId(), price: 10 });
      await t.repos.lots.upsertBatch([lot]);
      const corrected = { ...lot, vin: randomVin() };
      expect(await t.repos.lots.upsertBatch([corrected])).toEqual({ inserted: 0, updated: 1, unchanged: 0 });
      expect(await t.repos.lots.findByVin(lot.vin)).toEqual([]);
      expect(await t.repos.lots.findByVin(corrected.vin)).toEqual([corrected]);
    });

    test('the same lot twice in one batch: the later line wins, merged as if loaded in turn', async () => {
      const vin = randomVin();
      const lotId = nextLotId();
      const first = makeLot({ vin, lot_id: lotId, price: 100, odometer: 50_000, images: ['https://img.example.com/c/1.jpg'] });
      const second = makeLot({ vin, lot_id: lotId, price: 200, color: 'RED' });
      expect(await t.repos.lots.upsertBatch([first, second])).toEqual({ inserted: 1, updated: 1, unchanged: 0 });
      expect(await t.repos.lots.findByVin(vin)).toEqual([{ ...first, price: 200, color: 'RED' }]);

      // Twice, identical, over a stored lot: one update then nothing new.
      const third = { ...first, price: 300 };
      expect(await t.repos.lots.upsertBatch([third, third])).toEqual({ inserted: 0, updated: 1, unchanged: 1 });
      expect((await t.repos.lots.findByVin(vin))[0]?.price).toBe(300);

      const vin2 = randomVin();
      const twin = makeLot({ vin: vin2, lot_id: nextLotId() });
      expect(await t.repos.lots.upsertBatch([twin, twin])).toEqual({ inserted: 1, updated: 0, unchanged: 1 });
    });

    // SQLite tells an insert from an update by the connection's last inserted rowid; a row of
    // another table inserted last on the same connection (the server stores searches there) must
    // not be mistaken for a lot.
    test.runIf(dialect === 'sqlite')('counts right after the connection inserted a row of another table with a higher rowid', async () => {
      const vin = randomVin();
      const stored = makeLot({ vin, lot_id: nextLotId(), price: 1 });
      const same = makeLot({ vin, lot_id: nextLotId(), price: 2 });
      await t.repos.lots.upsertBatch([stored, same]);
      await sql`create temp table if not exists rowid_elsewhere (x integer)`.execute(t.db.kysely);
      /** The next lot will get rowid top + 1: the other table's last rowid is set to top + offset. */
      const insertElsewhere = async (offset: number) => {
        const { top } = await t.db.kysely.selectFrom('lots').select(sql<number>`max(rowid)`.as('top')).executeTakeFirstOrThrow();
        await sql`insert or replace into rowid_elsewhere (rowid, x) values (${top + offset}, 0)`.execute(t.db.kysely);
      };
      for (const offset of [1, 1_000_000]) {
        await insertElsewhere(offset);
        stored.price = stored.price! + offset;
        expect(await t.repos.lots.upsertBatch([stored, same])).toEqual({ inserted: 0, updated: 1, unchanged: 1 });
        await insertElsewhere(offset);
        const fresh = makeLot({ vin, lot_id: nextLotId() });
        expect(await t.repos.lots.upsertBatch([fresh, fresh, same])).toEqual({ inserted: 1, updated: 0, unchanged: 2 });
      }
      expect((await t.repos.lots.findByVin(vin)).find((lot) => lot.lot_id === stored.lot_id)?.price).toBe(1_000_002);
    });

    test('created_at stays, updated_at moves only when something changed', async () => {
      const lot = makeLot({ vin: randomVin(), lot_id: nextLotId(), price: 1 });
      const t0 = new Date('2026-01-01T00:00:00.000Z');
      const t1 = new Date('2026-01-02T00:00:00.000Z');
      const t2 = new Date('2026-01-03T00:00:00.000Z');
      const stamps = () =>
        t.db.kysely.selectFrom('lots').select(['created_at', 'updated_at'])
          .where('auction', '=', lot.auction).where('lot_id', '=', lot.lot_id).executeTakeFirstOrThrow();
      await t.repos.lots.upsertBatch([lot], t0);
      await t.repos.lots.upsertBatch([lot], t1);
      expect(await stamps()).toEqual({ created_at: t0.toISOString(), updated_at: t0.toISOString() });
      await t.repos.lots.upsertBatch([{ ...lot, price: 2 }], t2);
      expect(await stamps()).toEqual({ created_at: t0.toISOString(), updated_at: t2.toISOString() });
    });

    test('a batch larger than one lookup chunk is counted right', async () => {
      const vin = randomVin();
      const lots = Array.from({ length: 450 }, () => makeLot({ vin, lot_id: nextLotId(), price: 1 }));
      expect(await t.repos.lots.upsertBatch(lots)).toEqual({ inserted: 450, updated: 0, unchanged: 0 });
      const again = lots.map((lot, i) => (i % 3 === 0 ? { ...lot, price: 2 } : lot));
      expect(await t.repos.lots.upsertBatch(again)).toEqual({ inserted: 0, updated: 150, unchanged: 300 });
      expect((await t.repos.lots.findByVin(vin)).length).toBe(450);
    });

    test('a batch is one transaction: a bad lot rolls back the whole batch', async () => {
      const before = await t.repos.lots.count();
      const vin = randomVin();
      const stored = makeLot({ vin, lot_id: nextLotId(), price: 1 });
      await t.repos.lots.upsertBatch([stored]);
      const bad = { ...makeLot({ vin, lot_id: nextLotId() }), auction: null } as unknown as Lot;
      await expect(
        t.repos.lots.upsertBatch([makeLot({ vin, lot_id: nextLotId() }), { ...stored, price: 2 }, bad]),
      ).rejects.toThrow();
      expect(await t.repos.lots.count()).toBe(before + 1);
      expect(await t.repos.lots.findByVin(vin)).toEqual([stored]);
    });
  });

  test('a VIN lookup uses lots_vin_idx', async () => {
    const vin = randomVin();
    await t.repos.lots.upsertBatch(Array.from({ length: 20 }, () => makeLot({ vin: randomVin(), lot_id: nextLotId() })));
    let plan: string;
    if (dialect === 'sqlite') {
      const { rows } = await sql<{ detail: string }>`explain query plan select * from lots where vin = ${vin}`.execute(t.db.kysely);
      plan = rows.map((row) => row.detail).join('\n');
    } else {
      // A tiny table may be cheaper to scan; forbid that for this transaction only to see whether
      // the planner can use the index at all.
      plan = await t.db.kysely.transaction().execute(async (trx) => {
        await sql`set local enable_seqscan = off`.execute(trx);
        const { rows } = await sql<{ 'QUERY PLAN': string }>`explain select * from lots where vin = ${vin}`.execute(trx);
        return rows.map((row) => row['QUERY PLAN']).join('\n');
      });
    }
    expect(plan).toContain('lots_vin_idx');
  });
});
