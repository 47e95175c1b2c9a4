import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { LISTING_FIELD, type LotVersion } from '../../../src/domain/lot-history.ts';
import { LOT_FIELDS, lotJson, type Lot } from '../../../src/domain/lot.ts';
import { Prng } from '../../../src/dev/seed/prng.ts';
import { lotHistory, statesOf } from '../../../src/history/lot-history.ts';
import type { KnownLotsWritten } from '../../../src/storage/dialects/dialect.ts';
import { mergeLot } from '../../../src/storage/lot-rows.ts';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../../support/databases.ts';
import { makeLot, validVin } from '../../support/fixtures.ts';

const VINS = [validVin('1HGCM82633A00435'), validVin('5YJ3E1EA7KF31740')];
const IMAGES = [[], ['https://img.example.com/1.jpg'], ['https://img.example.com/1.jpg', 'https://img.example.com/2.jpg']];

/** A lot whose fields are each null or one of two values, so that imports often change nothing. */
function randomLot(rng: Prng, key: { auction: string; lot_id: number; vin: string }): Lot {
  const lot = makeLot(key) as Record<string, unknown>;
  for (const field of LOT_FIELDS) {
    if (field === 'vin' || field === 'auction' || field === 'lot_id') continue;
    if (field === 'images') lot.images = [...rng.pick(IMAGES)];
    else if (rng.chance(0.5)) lot[field] = null;
    else if (field === 'sale_date') lot[field] = rng.pick(['2024-05-17T15:00:00.000Z', '2021-01-01T00:00:00.000Z']);
    else if (['year', 'price', 'odometer', 'cylinders', 'repair_cost', 'retail_value'].includes(field)) lot[field] = rng.pick([2010, 2011]);
    else lot[field] = rng.pick(['A', 'B']);
  }
  return lot as Lot;
}

interface Expected {
  states: Lot[];
  versions: { observed_at: string; source: string }[];
  lastSeen: string;
}

describe.each(DIALECTS)('lot versions written by the import (%s)', (dialect) => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase(dialect);
  });
  afterAll(async () => {
    await t?.destroy();
  });

  it('keep one version per import that changed a lot, holding exactly what mergeLot made of it, and move last_seen_at always', async () => {
    const rng = new Prng(dialect === 'sqlite' ? 29 : 30);
    const keys = Array.from({ length: 30 }, (_, i) => ({ auction: i % 2 ? 'copart' : 'iaai', lot_id: 29_000_000 + i, vin: VINS[i % 2]! }));
    const expected = new Map<number, Expected>();
    for (let round = 0; round < 6; round++) {
      const at = new Date(Date.UTC(2026, 10, 1 + round)).toISOString();
      const source = `round-${round}.csv`;
      const before = new Map([...expected].map(([id, e]) => [id, e.states.at(-1)!]));
      // Some lines repeat what is stored (a re-import that changes nothing), some bring a second line of one lot.
      const line = (key: (typeof keys)[number]) => (before.has(key.lot_id) && rng.chance(0.3) ? { ...before.get(key.lot_id)! } : randomLot(rng, key));
      const lines = keys.filter(() => rng.chance(0.7)).flatMap((key) => (rng.chance(0.15) ? [line(key), randomLot(rng, key)] : [line(key)]));
      const after = new Map(before);
      for (const line of lines) {
        const stored = after.get(line.lot_id);
        after.set(line.lot_id, stored ? (mergeLot(stored, line) ?? stored) : line);
      }
      await t.repos.lots.upsertBatch(lines, { now: new Date(at), source });
      for (const [id, lot] of after) {
        const entry = expected.get(id) ?? { states: [], versions: [], lastSeen: at };
        if (!before.has(id) || JSON.stringify(before.get(id)) !== JSON.stringify(lot)) {
          entry.states.push(lot);
          entry.versions.push({ observed_at: at, source });
        }
        if (lines.some((line) => line.lot_id === id)) entry.lastSeen = at;
        expected.set(id, entry);
      }
    }
    let kept = 0;
    for (const key of keys) {
      const want = expected.get(key.lot_id);
      const stored = await t.repos.lotHistory.historyOf({ auction: key.auction, lotId: key.lot_id });
      if (!want) {
        expect(stored).toBeNull();
        continue;
      }
      const history = lotHistory(stored!);
      expect(statesOf(history), `${key.auction} ${key.lot_id}`).toEqual(want.states);
      expect(history.versions.map((v) => ({ observed_at: v.observed_at, source: v.source }))).toEqual(want.versions);
      expect(history.first_seen_at).toBe(want.versions[0]!.observed_at);
      expect(history.last_seen_at).toBe(want.lastSeen);
      expect(history.versions[0]!.changed.vin).toEqual({ from: null, to: key.vin });
      kept += history.versions.length - 1;
    }
    // The rounds did change lots, and left some alone: both sides of the rule were met.
    expect(kept).toBeGreaterThan(10);
    expect([...expected.values()].some((e) => e.lastSeen !== e.versions.at(-1)!.observed_at)).toBe(true);
  });

  it('reads a stored lot back as exactly lotJson of its values, so that a re-import of it as stored is a text comparison', async () => {
    const lots = [
      makeLot({ vin: VINS[0]!, auction: 'copart', lot_id: 29_200_001, price: 2_147_483_647, year: 2011, odometer: 0, images: ['https://img.example.com/a/1.jpg?x=1&y="2"'] }),
      makeLot({ vin: VINS[1]!, auction: 'iaai', lot_id: 29_200_002, name: 'Škoda "Octavia" 1.6\\TDI é 漢字 😀 </script>', highlight: 'line\nbreak\ttab\u0001', sale_date: '2024-05-17T15:00:00.000Z' }),
    ];
    await t.repos.lots.upsertBatch(lots, { now: new Date('2026-11-01T00:00:00.000Z') });
    const stored = await t.db.dialect.storedLotsByKey(t.db.kysely, lots.map((lot) => ({ auction: lot.auction, lotId: lot.lot_id })));
    expect(new Map(stored.map((row) => [row.lot_id, row.lot]))).toEqual(new Map(lots.map((lot) => [lot.lot_id, lotJson(lot)])));
    // The same lines again change nothing and only move the sighting.
    expect(await t.repos.lots.upsertBatch(lots, { now: new Date('2026-11-02T00:00:00.000Z') })).toEqual({ inserted: 0, updated: 0, unchanged: 2 });
    const history = lotHistory((await t.repos.lotHistory.historyOf({ auction: 'iaai', lotId: 29_200_002 }))!);
    expect(history.versions).toHaveLength(1);
    expect(history.last_seen_at).toBe('2026-11-02T00:00:00.000Z');
  });

  it('moves the sighting of an unchanged lot in lot_sightings, not in its row, and reads the later of the two', async () => {
    const vin = validVin('2T1BURHE0JC04117');
    const lot = makeLot({ vin, auction: 'copart', lot_id: 29_300_001, price: 100 });
    const ref = { auction: 'copart', lotId: 29_300_001 };
    const rowSeen = async () => (await t.db.kysely.selectFrom('lots').select('last_seen_at').where('lot_id', '=', ref.lotId).executeTakeFirstOrThrow()).last_seen_at;
    const sighting = async () => (await t.db.kysely.selectFrom('lot_sightings').select('last_seen_at').where('lot_id', '=', ref.lotId).executeTakeFirst())?.last_seen_at;
    const lastSeen = async () => [lotHistory((await t.repos.lotHistory.historyOf(ref))!).last_seen_at, (await t.repos.lotHistory.historiesOfVin(vin)).get('copart/29300001')!.lastSeenAt];

    await t.repos.lots.upsertBatch([lot], { now: new Date('2026-11-01T00:00:00.000Z') });
    expect(await sighting()).toBeUndefined();
    await t.repos.lots.upsertBatch([lot], { now: new Date('2026-11-02T00:00:00.000Z') });
    expect(await rowSeen()).toBe('2026-11-01T00:00:00.000Z');
    expect(await sighting()).toBe('2026-11-02T00:00:00.000Z');
    expect(await lastSeen()).toEqual(['2026-11-02T00:00:00.000Z', '2026-11-02T00:00:00.000Z']);
    // A change writes the row, and its sighting with it: the older one beside it no longer counts.
    await t.repos.lots.upsertBatch([{ ...lot, price: 200 }], { now: new Date('2026-11-03T00:00:00.000Z') });
    expect(await rowSeen()).toBe('2026-11-03T00:00:00.000Z');
    expect(await lastSeen()).toEqual(['2026-11-03T00:00:00.000Z', '2026-11-03T00:00:00.000Z']);
    await t.repos.lots.upsertBatch([{ ...lot, price: 200 }], { now: new Date('2026-11-04T00:00:00.000Z') });
    expect(await rowSeen()).toBe('2026-11-03T00:00:00.000Z');
    expect(await lastSeen()).toEqual(['2026-11-04T00:00:00.000Z', '2026-11-04T00:00:00.000Z']);
  });

  it('records a lot leaving its listing once, and its coming back when an import names it again', async () => {
    const lot = makeLot({ vin: VINS[0]!, auction: 'copart', lot_id: 29_100_001, price: 100 });
    await t.repos.lots.upsertBatch([lot], { now: new Date('2026-11-03T00:00:00.000Z'), source: 'copart-feed' });
    const ref = { auction: lot.auction, lotId: lot.lot_id };
    expect(await t.repos.lotHistory.recordListing([ref, { auction: 'copart', lotId: 1 }], 'left', { now: new Date('2026-11-10T00:00:00.000Z'), source: 'copart-feed' })).toEqual({ changed: 1 });
    expect(await t.repos.lotHistory.recordListing([ref], 'left', { now: new Date('2026-11-11T00:00:00.000Z'), source: 'copart-feed' })).toEqual({ changed: 0 });
    await t.repos.lots.upsertBatch([lot], { now: new Date('2026-11-24T00:00:00.000Z'), source: 'copart-feed' });
    const history = lotHistory((await t.repos.lotHistory.historyOf(ref))!);
    const later: LotVersion[] = history.versions.slice(1);
    expect(later).toEqual([
      { observed_at: '2026-11-10T00:00:00.000Z', source: 'copart-feed', changed: { [LISTING_FIELD]: { from: 'listed', to: 'left' } } },
      { observed_at: '2026-11-24T00:00:00.000Z', source: 'copart-feed', changed: { [LISTING_FIELD]: { from: 'left', to: 'listed' } } },
    ]);
    expect(history.last_seen_at).toBe('2026-11-24T00:00:00.000Z');
    expect(history.versions[0]!.changed.price).toEqual({ from: null, to: 100 });
  });

  it('finds the same outcome whether the database checks and writes the lots named once or the batch compares and merges them itself', async () => {
    const probe = vi.spyOn(t.db.dialect, 'writeKnownLots');
    const read = vi.spyOn(t.db.dialect, 'storedLotsByKey');
    /** One scenario on its own lot ids: stored lots, then a batch of every kind of line; what it leaves. */
    const scenario = async (base: number, probing: boolean) => {
      const key = (i: number) => ({ auction: i % 2 ? 'copart' : 'iaai', lot_id: base + i, vin: VINS[i % 2]! });
      const stored = Array.from({ length: 40 }, (_, i) => randomLot(new Prng(i), key(i)));
      await t.repos.lots.upsertBatch(stored, { now: new Date('2026-11-01T00:00:00.000Z') });
      // The batch before decides whether the next one probes: a re-import of every stored lot as it is, or new lots only.
      const before = probing ? stored : Array.from({ length: 40 }, (_, i) => randomLot(new Prng(100 + i), key(100 + i)));
      await t.repos.lots.upsertBatch(before, { now: new Date('2026-11-02T00:00:00.000Z') });
      // Out of their listing: lot 5 comes back as it is, lot 8 comes back changed.
      await t.repos.lotHistory.recordListing([5, 8].map((i) => ({ auction: key(i).auction, lotId: key(i).lot_id })), 'left', { now: new Date('2026-11-03T00:00:00.000Z') });
      const lines: Lot[] = [];
      for (let i = 0; i < 40; i++) {
        const lot = stored[i]!;
        if (i % 4 === 0) lines.push({ ...lot, price: (lot.price ?? 0) + 1 }); // changed
        else if (i % 7 === 0) lines.push({ ...lot, images: [] }); // thinner: unchanged under the merge rule, but not equal
        else if (i % 9 === 0) lines.push({ ...lot }, { ...lot, odometer: 77 }); // twice in the batch
        else lines.push({ ...lot }); // as stored (lot 5 is out of its listing)
      }
      lines.push(randomLot(new Prng(200), key(200))); // new
      probe.mockClear();
      read.mockClear();
      const generations = async () =>
        new Map((await t.db.kysely.selectFrom('market_groups').selectAll().execute()).map((g) => [`${g.make_key}/${g.model_key}/${g.year}/${g.month}`, Number(g.generation)]));
      const was = await generations();
      const summary = await t.repos.lots.upsertBatch(lines, { now: new Date('2026-11-04T00:00:00.000Z'), source: 'batch.ndjson' });
      // The market groups the batch bumped, and by how much (once each): the same lots' values in both scenarios make the same groups.
      const bumped = [...(await generations())].filter(([group, generation]) => generation !== (was.get(group) ?? 0)).map(([group, generation]) => [group, generation - (was.get(group) ?? 0)]).sort();
      const asked = probe.mock.calls.length > 0;
      const readKeys = read.mock.calls.reduce((sum, [, keys]) => sum + keys.length, 0);
      const answers = await Promise.all(probe.mock.results.map((result) => result.value as Promise<KnownLotsWritten | null>));
      const outcomes = answers.flatMap((answer) => answer?.outcomes ?? []);
      const found = outcomes.filter((outcome) => outcome === 'same').length;
      const storedFound = outcomes.filter((outcome) => outcome === 'updated' || outcome === 'listed').length;
      const histories = [];
      for (const i of [...Array.from({ length: 40 }, (_, i) => i), 200]) {
        const history = lotHistory((await t.repos.lotHistory.historyOf({ auction: key(i).auction, lotId: key(i).lot_id }))!);
        histories.push({ states: statesOf(history).map((state) => ({ ...state, lot_id: state.lot_id - base })), versions: history.versions.map((v) => [v.observed_at, v.source, { ...v.changed, lot_id: null }]), last: history.last_seen_at });
      }
      return { summary, histories, asked, found, storedFound, readKeys, outcomes, bumped };
    };
    const probed = await scenario(29_400_000, true);
    const compared = await scenario(29_500_000, false);
    expect(probed.asked).toBe(true);
    expect(compared.asked).toBe(false);
    // SQLite checks in the database (most lines as stored); PostgreSQL leaves it to the comparison.
    if (dialect === 'sqlite') {
      expect(probed.found).toBeGreaterThan(15);
      // The changed lines are written by the database itself (lot 5, only back in its listing, among them), not read.
      expect(probed.storedFound).toBeGreaterThan(5);
      expect(probed.outcomes).toContain('listed');
      // Read by key: only the lots named twice (9, 18, 27), which the probe does not check.
      expect(probed.readKeys).toBe(3);
    }
    expect(probed.summary).toEqual({ inserted: 1, updated: 13, unchanged: 30 });
    expect(probed.summary).toEqual(compared.summary);
    expect(probed.histories).toEqual(compared.histories);
    expect(probed.bumped.length).toBeGreaterThan(0);
    expect(probed.bumped).toEqual(compared.bumped);
    probe.mockRestore();
    read.mockRestore();
  });
});
