import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Lot } from '../../../src/domain/lot.ts';
import { loadCsvMapping } from '../../../src/ingest/formats/csv-mapping.ts';
import { IngestError } from '../../../src/ingest/ingest-error.ts';
import { MAX_JSON_DEPTH, MAX_RECORD_CHARS } from '../../../src/ingest/record-limits.ts';
import { readFileInWorker, type WorkerFileSource } from '../../../src/ingest/worker/read-file-in-worker.ts';
import { fixture, lotsOf, readPrepared, rejectionsOf } from '../helpers.ts';

interface Collected {
  lots: Lot[];
  rejected: { line: number; reason: string }[];
  reads: number[];
  failure: Error | null;
}

/** Everything a worker source gives. */
async function collect(source: WorkerFileSource): Promise<Collected> {
  const seen: Collected = { lots: [], rejected: [], reads: [], failure: null };
  try {
    for await (const chunk of source.chunks) {
      seen.reads.push(chunk.read);
      seen.lots.push(...chunk.lots);
      seen.rejected.push(...chunk.rejected.map(({ line, reason }) => ({ line, reason })));
    }
  } catch (error) {
    seen.failure = error as Error;
  }
  return seen;
}

describe('reading a file on a worker thread', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'vinhistory-worker-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('prepares JSON lots on the worker: the same lots and rejections, in order, as in-process', async () => {
    const file = fixture('auctionsapi/vehicles-array.json');
    const source = await readFileInWorker({ file, format: 'auto', chunkSize: 2 });
    expect(source.description).toBe('auctionsapi vehicle records (JSON array)');
    const seen = await collect(source);
    expect(seen.failure).toBeNull();
    expect(seen.reads).toEqual([2, 2]);
    const inProcess = await readPrepared(file);
    expect(seen.lots).toEqual(lotsOf(inProcess));
    expect(seen.rejected).toEqual(rejectionsOf(inProcess));
    expect(source.bytesRead()).toBe(source.size);
  });

  it('prepares CSV lots on the worker too: the same lots and rejections, in order', async () => {
    const copart = fixture('copart/salesdata-59-quirks.csv');
    const source = await readFileInWorker({ file: copart, format: 'auto', chunkSize: 2 });
    expect(source.description).toBe('Copart sales-data CSV (59 columns)');
    const seen = await collect(source);
    const inProcess = await readPrepared(copart);
    expect(seen.lots).toEqual(lotsOf(inProcess));
    expect(seen.rejected).toEqual(rejectionsOf(inProcess));

    const listings = fixture('usa-cars/usa-cars-subset.csv');
    const mapping = await loadCsvMapping(new URL('../../../examples/usa-cars.mapping.json', import.meta.url).pathname);
    const mapped = await collect(await readFileInWorker({ file: listings, format: 'auto', mapping, chunkSize: 7 }));
    expect(mapped.lots).toEqual(lotsOf(await readPrepared(listings, { mapping })));
    expect(mapped.rejected).toEqual([{ line: 34, reason: 'vin: The vin must be exactly 17 characters; got 13.' }]);
  });

  it('refuses a file that is not lot data, and says when a file cannot be opened', async () => {
    await expect(readFileInWorker({ file: fixture('copart/bot-wall.csv'), format: 'auto' })).rejects.toThrow(IngestError);
    await expect(readFileInWorker({ file: fixture('copart/bot-wall.csv'), format: 'auto' })).rejects.toMatchObject({ kind: 'refused' });
    await expect(readFileInWorker({ file: path.join(dir, 'missing.csv'), format: 'auto' })).rejects.toThrow(IngestError);
    await expect(readFileInWorker({ file: path.join(dir, 'missing.csv'), format: 'auto' })).rejects.toMatchObject({ kind: 'unreadable' });
  });

  it('passes on what was read before a truncated end, then the reason', async () => {
    const text = readFileSync(fixture('auctionsapi/vehicles-array.json'), 'utf8');
    const json = path.join(dir, 'cut.json');
    writeFileSync(json, text.slice(0, text.indexOf('"lot": "33012007"')));
    const cutJson = await collect(await readFileInWorker({ file: json, format: 'auto', chunkSize: 1 }));
    expect(cutJson.lots.map((lot) => lot.lot_id)).toEqual([45289258]);
    expect(cutJson.failure?.message).toMatch(/^the file ends inside the record that starts on line \d+: it is truncated$/);

    const rows = readFileSync(fixture('copart/salesdata-59-quirks.csv'), 'utf8');
    const csv = path.join(dir, 'cut.csv');
    writeFileSync(csv, rows.slice(0, rows.indexOf('"PROGRESSIVE', rows.indexOf('\n"5"')) + 5));
    const cutCsv = await collect(await readFileInWorker({ file: csv, format: 'auto', chunkSize: 2 }));
    expect(cutCsv.lots.map((lot) => lot.lot_id)).toEqual([26519090, 41873052, 52218870, 60012345]);
    expect(cutCsv.failure?.message).toMatch(/^the file ends inside a quoted field opened on line 6/);
  });

  it('stops the worker when the reader stops early', async () => {
    const source = await readFileInWorker({ file: fixture('auctionsapi/vehicles-array.json'), format: 'auto', chunkSize: 1 });
    for await (const chunk of source.chunks) {
      expect(chunk.read).toBe(1);
      break;
    }
    await source.close();
  });

  it('skips a deeply nested record and an over-long one, and reads the rest of the file (the CLI path)', async () => {
    const lot = (id: number) => JSON.stringify({ vin: '4JGBF7BE5AA585531', auction: 'copart', lot_id: id });
    const deep = `{"vin":"4JGBF7BE5AA585531","auction":"copart","lot_id":9,"name":${'['.repeat(20_000)}${']'.repeat(20_000)}}`;
    const long = JSON.stringify({ vin: '4JGBF7BE5AA585531', auction: 'copart', lot_id: 8, name: 'x'.repeat(MAX_RECORD_CHARS) });
    const lines = [lot(1), deep, lot(2), long, lot(3), JSON.stringify({ vin: '4JGBF7BE5AA585531', auction: 'copart', lot_id: 7, name: 'y'.repeat(301) })];
    for (const [name, text] of [['deep.ndjson', `${lines.join('\n')}\n`], ['deep.json', `[${lines.join(',\n')}]`]] as const) {
      const file = path.join(dir, name);
      writeFileSync(file, text);
      const seen = await collect(await readFileInWorker({ file, format: 'auto', chunkSize: 2 }));
      expect(seen.failure, name).toBeNull();
      expect(seen.lots.map((l) => l.lot_id), name).toEqual([1, 2, 3]);
      expect(seen.rejected, name).toEqual([
        { line: 2, reason: `the record is nested more than ${MAX_JSON_DEPTH} levels deep: not one lot` },
        { line: 4, reason: expect.stringMatching(new RegExp(`^the (line|record) is longer than ${MAX_RECORD_CHARS} characters`)) },
        { line: 6, reason: 'name: must be at most 300 characters; got 301' },
      ]);
    }
  });
});
