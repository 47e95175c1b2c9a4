import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH, tooLongReason } from '../../../src/ingest/record-limits.ts';
import { createTestApp, type TestApp } from '../../support/app.ts';
import { DIALECTS } from '../../support/databases.ts';
import { makeLot, validVin } from '../../support/fixtures.ts';

/** The bounds of docs/import-formats.md over HTTP: a bad record costs itself, never the batch. */
describe.each(DIALECTS)('POST /admin/v1/lots bounds on %s', (dialect) => {
  let t: TestApp;
  let token: string;
  const vin = validVin('2T1BURHE0JC04432');

  beforeAll(async () => {
    t = await createTestApp(dialect);
    token = (await t.repos.operatorTokens.create('scraper')).token;
  });
  afterAll(async () => t?.close());

  const post = (payload: string | Buffer) =>
    t.app.inject({ method: 'POST', url: '/admin/v1/lots', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-ndjson' }, payload });
  const line = (lotId: number, extra: Record<string, unknown> = {}) => JSON.stringify({ ...makeLot({ vin, lot_id: lotId }), ...extra });

  it('stores the good lots around a deeply nested one and answers 200 with its reason', async () => {
    const good = Array.from({ length: 500 }, (_, i) => line(100_000 + i));
    const deep = `{"vin":"${vin}","auction":"copart","lot_id":1,"name":${'['.repeat(20_000)}${']'.repeat(20_000)}}`;
    const res = await post(`${[...good.slice(0, 250), deep, ...good.slice(250)].join('\n')}\n`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      read: 501,
      inserted: 500,
      skipped: 1,
      rejected: [{ line: 251, reason: `the record is nested more than ${MAX_JSON_DEPTH} levels deep: not one lot` }],
    });
    expect(await t.repos.lots.findByVin(vin)).toHaveLength(500);
  });

  it('skips a lot with an over-long field or too many images, with the field and its limit, and loads the rest', async () => {
    const res = await post(
      [line(1), line(2, { highlight: 'x'.repeat(100_000) }), line(3, { images: Array.from({ length: 101 }, (_, i) => `https://i.example.com/${i}.jpg`) }), line(4)].join('\n'),
    );
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      inserted: 2,
      skipped: 2,
      rejected: [
        { line: 2, reason: 'highlight: must be at most 300 characters; got 100000' },
        { line: 3, reason: 'images: must hold at most 100 URLs; got 101' },
      ],
    });
  });

  it('skips a gzip line larger than the record cap as it streams, and loads the next', async () => {
    const huge = `{"vin":"${vin}","auction":"copart","lot_id":5,"name":"${'x'.repeat(30 * 1024 * 1024)}"}`;
    const res = await post(gzipSync(`${huge}\n${line(6)}\n`));
    expect(res.statusCode).toBe(200);
    // A first line longer than the 64 KiB sniffed is read by structure (a JSON record), not as a line.
    expect(res.json()).toMatchObject({ inserted: 1, skipped: 1, rejected: [{ line: 1, reason: tooLongReason('record', huge.length) }] });
  });
});
