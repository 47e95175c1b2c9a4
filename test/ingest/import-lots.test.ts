import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Lot } from '../../src/domain/lot.ts';
import { fileSource } from '../../src/ingest/import-files.ts';
import { importLots, importPreparedChunks } from '../../src/ingest/import-lots.ts';
import type { RejectedRecord } from '../../src/ingest/import-summary.ts';
import { IngestError } from '../../src/ingest/ingest-error.ts';
import type { PreparedChunk } from '../../src/ingest/prepare-lot.ts';
import { readNdjsonRecords } from '../../src/ingest/formats/ndjson-records.ts';
import type { SourceRecord } from '../../src/ingest/sources/source-record.ts';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../support/databases.ts';
import { makeLot, validVin } from '../support/fixtures.ts';

const VIN_A = validVin('1HGCM82633A00435');
const VIN_B = validVin('5YJ3E1EA7KF31740');

function lotLine(overrides: Partial<Lot> & Pick<Lot, 'vin' | 'lot_id'>): string {
  return JSON.stringify(makeLot(overrides));
}

function ndjson(lines: string[]): Readable {
  return Readable.from([lines.join('\n') + '\n']);
}

describe.each(DIALECTS)('importLots on %s', (dialect) => {
  let database: TestDatabase;
  beforeEach(async () => {
    database = await createTestDatabase(dialect);
  });
  afterEach(async () => {
    await database.destroy();
  });

  async function run(lines: string[], batchSize = 1000) {
    const rejected: RejectedRecord[] = [];
    const summary = await importLots(readNdjsonRecords(ndjson(lines)), {
      lots: database.repos.lots,
      batchSize,
      onRejected: (record) => rejected.push(record),
    });
    return { summary, rejected };
  }

  const good = [
    lotLine({ vin: VIN_A, lot_id: 1001, auction: 'copart', price: 8800, sale_date: '2021-03-16T18:00:00.000Z' }),
    lotLine({ vin: VIN_A, lot_id: 2002, auction: 'iaai', odometer: 38902, images: ['https://vis.iaai.com/resizer?imageKeys=2002~1'] }),
    lotLine({ vin: VIN_B, lot_id: 3003, auction: 'copart', color: 'GRAY' }),
  ];

  it('loads the good lines of a file and reports each bad one with its line number and reason', async () => {
    const lines = [
      good[0]!,
      '{"vin": "1HGCM82633A004352", "auction": "copart", "lot_id": 1', // truncated JSON
      JSON.stringify({ vin: '1HGCM82633A004353', auction: 'copart', lot_id: 4004 }), // wrong check digit
      good[1]!,
      JSON.stringify({ vin: VIN_B, auction: 'copart', price: 100 }), // no lot_id
      JSON.stringify({ vin: VIN_B, auction: 'copart', lot_id: 5005, price: 99.99 }), // not an integer
      good[2]!,
    ];
    const { summary, rejected } = await run(lines, 2);

    expect(summary).toEqual({ read: 7, inserted: 3, updated: 0, unchanged: 0, skipped: 4 });
    expect(rejected).toEqual([
      { line: 2, reason: expect.stringMatching(/^invalid JSON: /), source: lines[1] },
      { line: 3, reason: 'vin: The vin check digit (position 9) is 3, but this VIN requires 5.', source: lines[2] },
      { line: 5, reason: 'lot_id: is required', source: lines[4] },
      { line: 6, reason: 'price: must be a whole number; got 99.99', source: lines[5] },
    ]);
    const lotsA = await database.repos.lots.findByVin(VIN_A);
    expect(lotsA.map((lot) => [lot.auction, lot.lot_id])).toEqual([
      ['copart', 1001],
      ['iaai', 2002],
    ]);
    expect(lotsA[1]!.images).toEqual(['https://vis.iaai.com/resizer?imageKeys=2002~1']);
    expect(await database.repos.lots.findByVin(VIN_B)).toEqual([makeLot({ vin: VIN_B, lot_id: 3003, auction: 'copart', color: 'GRAY' })]);
    expect(await database.repos.lots.count()).toBe(3);
  });

  it('counts a re-import of the same file as unchanged, and a changed field as one update', async () => {
    expect((await run(good)).summary).toEqual({ read: 3, inserted: 3, updated: 0, unchanged: 0, skipped: 0 });
    expect((await run(good)).summary).toEqual({ read: 3, inserted: 0, updated: 0, unchanged: 3, skipped: 0 });

    const changed = [...good];
    changed[2] = lotLine({ vin: VIN_B, lot_id: 3003, auction: 'copart', color: 'GRAY', price: 4150 });
    expect((await run(changed)).summary).toEqual({ read: 3, inserted: 0, updated: 1, unchanged: 2, skipped: 0 });
    expect((await database.repos.lots.findByVin(VIN_B))[0]!.price).toBe(4150);
  });

  it('keeps a stored value when a re-import leaves the field null or absent', async () => {
    await run(good);
    const thinner = JSON.stringify({ vin: VIN_A, auction: 'copart', lot_id: 1001, price: null, location: 'VALLEJO' });
    expect((await run([thinner])).summary).toEqual({ read: 1, inserted: 0, updated: 1, unchanged: 0, skipped: 0 });
    const [lot] = (await database.repos.lots.findByVin(VIN_A)).filter((l) => l.lot_id === 1001);
    expect(lot).toMatchObject({ price: 8800, location: 'VALLEJO', sale_date: '2021-03-16T18:00:00.000Z' });
  });

  it('normalises what it stores: case, spaces, numeric strings and offsets', async () => {
    const raw = { vin: ` ${VIN_A.toLowerCase()}`, auction: 'IAAI', lot_id: '7007', price: '1450', sale_date: '2022-04-20T11:00:00-05:00', keys: ' ' };
    expect((await run([JSON.stringify(raw)])).summary.inserted).toBe(1);
    const [lot] = await database.repos.lots.findByVin(VIN_A);
    expect(lot).toMatchObject({ vin: VIN_A, auction: 'iaai', lot_id: 7007, price: 1450, sale_date: '2022-04-20T16:00:00.000Z', keys: null });
  });

  it('names its source in the history of the lots it stores and changes (a file\'s name, the CLI\'s fileSource)', async () => {
    const store = (lines: string[], source: string) => importLots(readNdjsonRecords(ndjson(lines)), { lots: database.repos.lots, source });
    await store([lotLine({ vin: VIN_A, lot_id: 29_001, price: 100 })], fileSource('/srv/feeds/copart-2026-11-03.csv'));
    await store([lotLine({ vin: VIN_A, lot_id: 29_001, price: 200 })], fileSource('-'));
    const history = await database.repos.lotHistory.historyOf({ auction: 'copart', lotId: 29_001 });
    expect(history?.firstSource).toBe('copart-2026-11-03.csv');
    expect(history?.laterVersions.map((version) => [version.source, version.changed])).toEqual([['stdin', { price: { from: 100, to: 200 } }]]);
  });

  it('stores the good lines read before the source failed, then says the source failed', async () => {
    async function* failing(): AsyncGenerator<SourceRecord> {
      yield { line: 1, raw: JSON.parse(good[0]!) };
      yield { line: 2, raw: JSON.parse(good[1]!) };
      throw new Error('unexpected end of file');
    }
    const failure = await importLots(failing(), { lots: database.repos.lots }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(IngestError);
    expect((failure as IngestError).kind).toBe('cut-short');
    expect((failure as IngestError).message).toBe('unexpected end of file');
    expect((failure as IngestError).afterLine).toBe(2);
    expect((failure as IngestError).summary).toEqual({ read: 2, inserted: 2, updated: 0, unchanged: 0, skipped: 0 });
    expect(await database.repos.lots.count()).toBe(2);
  });
});

describe('importLots batching', () => {
  it('writes in batches of the given size and the rest at the end', async () => {
    const batches: number[] = [];
    const sink = {
      upsertBatch: async (lots: Lot[]) => {
        batches.push(lots.length);
        return { inserted: lots.length, updated: 0, unchanged: 0 };
      },
    };
    const lines = Array.from({ length: 7 }, (_, i) => lotLine({ vin: VIN_A, lot_id: i + 1 }));
    const summary = await importLots(readNdjsonRecords(ndjson(lines)), { lots: sink, batchSize: 3 });
    expect(batches).toEqual([3, 3, 1]);
    expect(summary).toEqual({ read: 7, inserted: 7, updated: 0, unchanged: 0, skipped: 0 });
  });

  it('refuses a batch size that is not a positive integer', async () => {
    const sink = { upsertBatch: async () => ({ inserted: 0, updated: 0, unchanged: 0 }) };
    await expect(importLots(readNdjsonRecords(ndjson([])), { lots: sink, batchSize: 0 })).rejects.toThrow(RangeError);
  });
});

describe('importLots stopping on request', () => {
  it('stores what was read, then throws an IngestError interrupted with the summary so far', async () => {
    const stop = new AbortController();
    const stored: number[] = [];
    const sink = {
      upsertBatch: async (lots: Lot[]) => {
        stored.push(...lots.map((lot) => lot.lot_id));
        // Ctrl-C while the first batch is being stored.
        stop.abort();
        return { inserted: lots.length, updated: 0, unchanged: 0 };
      },
    };
    let produced = 0;
    async function* records(): AsyncGenerator<SourceRecord> {
      for (let i = 1; i <= 100; i++) {
        produced = i;
        yield { line: i, raw: makeLot({ vin: VIN_A, lot_id: i }) };
      }
    }
    const failure = await importLots(records(), { lots: sink, batchSize: 5, signal: stop.signal }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(IngestError);
    expect((failure as IngestError).kind).toBe('interrupted');
    expect((failure as IngestError).summary).toEqual({ read: 5, inserted: 5, updated: 0, unchanged: 0, skipped: 0 });
    expect((failure as IngestError).afterLine).toBe(5);
    expect(stored).toEqual([1, 2, 3, 4, 5]);
    expect(produced).toBe(5); // nothing more was read
  });
});

describe('importPreparedChunks', () => {
  it('stores chunks prepared elsewhere in batches, reports their rejected records, and counts like importLots', async () => {
    const batches: number[] = [];
    const sink = {
      upsertBatch: async (lots: Lot[]) => {
        batches.push(lots.length);
        return { inserted: lots.length, updated: 0, unchanged: 0 };
      },
    };
    const rejected: RejectedRecord[] = [];
    async function* chunks(): AsyncGenerator<PreparedChunk> {
      yield { read: 3, lastLine: 3, lots: [makeLot({ vin: VIN_A, lot_id: 1 }), makeLot({ vin: VIN_A, lot_id: 2 })], rejected: [{ line: 2, reason: 'bad' }] };
      yield { read: 2, lastLine: 5, lots: [makeLot({ vin: VIN_A, lot_id: 4 }), makeLot({ vin: VIN_A, lot_id: 5 })], rejected: [] };
      throw new Error('the file ends inside the record that starts on line 6: it is truncated');
    }
    const failure = await importPreparedChunks(chunks(), { lots: sink, batchSize: 3, onRejected: (r) => rejected.push(r) }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(IngestError);
    expect((failure as IngestError).kind).toBe('cut-short');
    expect((failure as IngestError).summary).toEqual({ read: 5, inserted: 4, updated: 0, unchanged: 0, skipped: 1 });
    expect((failure as IngestError).afterLine).toBe(5);
    expect(batches).toEqual([3, 1]);
    expect(rejected).toEqual([{ line: 2, reason: 'bad' }]);
  });
});
