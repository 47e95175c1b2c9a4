import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { IngestError } from '../../../src/ingest/ingest-error.ts';
import { refusalFor } from '../../../src/ingest/sources/open-lot-source.ts';
import { fixture, lotsOf, readPrepared, streamOf } from '../helpers.ts';

const LOT = { vin: '1HGCV1F3XLA012873', auction: 'copart', lot_id: 41873052, price: 11200 };

describe('recognising a file by its content', () => {
  it.each([
    ['canonical NDJSON', `${JSON.stringify(LOT)}\n`, 'canonical lots (NDJSON)'],
    ['a canonical JSON array', `[${JSON.stringify(LOT)}]`, 'canonical lots (JSON array)'],
    ['a pretty-printed canonical lot', JSON.stringify(LOT, null, 2), 'canonical lots (JSON)'],
    ['a vendor record', readFileSync(fixture('auctionsapi/sample-car.json'), 'utf8'), 'auctionsapi vehicle records (JSON)'],
    ['Copart CSV', readFileSync(fixture('copart/salesdata-49.csv'), 'utf8'), 'Copart sales-data CSV (49 columns)'],
  ])('%s, whatever the file is called', async (_name, content, description) => {
    const result = await readPrepared(streamOf(content));
    expect(result.description).toBe(description);
    expect(lotsOf(result)).toHaveLength(1);
    // Compressed, without a .gz name to tell.
    const gzipped = await readPrepared(streamOf(gzipSync(content)));
    expect(gzipped.description).toMatch(/gzip/);
    expect(lotsOf(gzipped)).toEqual(lotsOf(result));
  });

  it.each([
    ['<!DOCTYPE html><html><body>Access denied</body></html>', 'looks like an HTML page (a bot wall or a login page?), not CSV or JSON'],
    ['\uFEFF\n  <html lang="en"><head><title>Attention Required! | Cloudflare</title>', 'looks like an HTML page (a bot wall or a login page?), not CSV or JSON'],
    ['<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml">', 'looks like an HTML page (a bot wall or a login page?), not CSV or JSON'],
    ['<?xml version="1.0"?><lots/>', 'looks like XML or HTML markup, not CSV or JSON'],
    ['', 'the file is empty'],
    ['  \n\n', 'the file is empty'],
    ['PK\u0003\u0004\u0000\u0000binary', 'looks like a binary file, not lot data (CSV, NDJSON or JSON)'],
  ])('refuses %j', async (content, reason) => {
    expect(refusalFor(content)).toBe(reason);
    await expect(readPrepared(streamOf(content))).rejects.toThrow(new IngestError(reason === 'the file is empty' ? 'empty' : 'refused', reason));
  });

  it('refuses a gzipped HTML page too', async () => {
    await expect(readPrepared(streamOf(gzipSync(readFileSync(fixture('copart/bot-wall.csv')))))).rejects.toThrow(/HTML page/);
  });

  it('honours a forced format', async () => {
    const vendor = readFileSync(fixture('auctionsapi/sample-car.json'), 'utf8');
    // Read as canonical lots, a vehicle record is not a valid lot.
    const forced = await readPrepared(streamOf(vendor), { format: 'ndjson' });
    expect(forced.description).toBe('canonical lots (JSON)');
    expect(forced.prepared[0]).toMatchObject({ ok: false, reason: expect.stringMatching(/lots: is not a Lot field/) });
    await expect(readPrepared(streamOf(`a,b\n1,2\n`), { format: 'csv' })).rejects.toThrow(/needs a mapping file/);
  });

  it('refuses anything but JSON when only NDJSON is expected (an upload)', async () => {
    await expect(readPrepared(streamOf(readFileSync(fixture('copart/salesdata-49.csv'))), { jsonOnly: true })).rejects.toThrow(
      'is not NDJSON: the first line does not start with "{"',
    );
  });
});
