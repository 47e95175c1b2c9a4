import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_LOTS_BODY_LIMIT, REJECTED_LISTED } from '../../../src/http/admin/lots.ts';
import { createTestApp, type TestApp } from '../../support/app.ts';
import { DIALECTS } from '../../support/databases.ts';
import { createCustomer, makeLot, validVin } from '../../support/fixtures.ts';
import { expectDocumentedStatuses } from '../../support/documented-statuses.ts';

const fixture = (name: string) => fileURLToPath(new URL(`../../fixtures/${name}`, import.meta.url));
const NDJSON = 'application/x-ndjson';

describe.each(DIALECTS)('POST /admin/v1/lots on %s', (dialect) => {
  let t: TestApp;
  let token: string;
  const vin = validVin('1FTFW1ET5DFC4321');

  beforeAll(async () => {
    t = await createTestApp(dialect);
    token = (await t.repos.operatorTokens.create('scraper')).token;
  });
  afterAll(async () => t?.close());

  const post = (payload: string | Buffer | Readable, headers: Record<string, string> = {}) =>
    t.app.inject({ method: 'POST', url: '/admin/v1/lots', headers: { authorization: `Bearer ${token}`, 'content-type': NDJSON, ...headers }, payload });
  const line = (lotId: number, extra: Record<string, unknown> = {}) => JSON.stringify({ ...makeLot({ vin, lot_id: lotId }), ...extra });

  describe('authentication', () => {
    it('answers 401 without a token, with an unknown or revoked one, and with a customer token', async () => {
      const body = `${line(1)}\n`;
      const revoked = await t.repos.operatorTokens.create('old');
      await t.repos.operatorTokens.revokeByToken(revoked.token);
      const customer = await createCustomer(t.repos);
      for (const authorization of [undefined, `vh_op_${'x'.repeat(32)}`, revoked.token, customer.token, `Bearer ${customer.token}`]) {
        const res = await t.app.inject({
          method: 'POST',
          url: '/admin/v1/lots',
          headers: { 'content-type': NDJSON, ...(authorization ? { authorization } : {}) },
          payload: body,
        });
        expect(res.statusCode, String(authorization)).toBe(401);
        expect(res.body).toBe('{"message":"Unauthenticated."}');
        expect(res.headers['www-authenticate']).toMatch(/^Bearer realm="vinhistory-admin"/);
      }
      expect(await t.repos.lots.findByVin(vin)).toEqual([]);
    });

    it('does not let an operator token search as a customer', async () => {
      const res = await t.app.inject({ method: 'GET', url: `/api/v1/search?vin=${vin}`, headers: { authorization: token } });
      expect(res.statusCode).toBe(401);
    });
  });

  it('records an upload in the operators\' audit log with the token name and the summary', async () => {
    const res = await post(`${JSON.stringify(makeLot({ vin: validVin('1FTFW1ET5DFC8765'), lot_id: 9001 }))}\n`);
    expect(res.statusCode).toBe(200);
    const [entry] = await t.repos.operatorAudit.page({ limit: 1, target: 'lots' });
    expect(entry).toMatchObject({ actor: 'token:scraper', action: 'lots.import', details: { read: 1, skipped: 0 } });
    // The lot's history names the push and its token as the source (lot history).
    expect((await t.repos.lotHistory.historyOf({ auction: 'copart', lotId: 9001 }))?.firstSource).toBe('admin-api:scraper');
  });

  it('loads NDJSON lots, reports each bad line with its reason, and answers the summary', async () => {
    const body = [line(101, { price: 5100 }), '{"vin": oops', JSON.stringify({ vin, auction: 'copart' }), '', line(104, { sale_date: '2024-05-01T10:00:00-07:00' })].join('\n');
    const res = await post(body);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      format: 'canonical lots (NDJSON)',
      read: 4,
      inserted: 2,
      updated: 0,
      unchanged: 0,
      skipped: 2,
      rejected: [
        { line: 2, reason: expect.stringMatching(/^invalid JSON: /) },
        { line: 3, reason: 'lot_id: is required' },
      ],
      rejected_not_listed: 0,
    });
    const stored = await t.repos.lots.findByVin(vin);
    expect(stored.map((lot) => [lot.lot_id, lot.price, lot.sale_date])).toEqual([
      [104, null, '2024-05-01T17:00:00.000Z'],
      [101, 5100, null],
    ]);

    // The same rules as the CLI: a re-send changing one field updates one lot.
    const again = await post([line(101, { price: 5200 }), line(104)].join('\n'));
    expect(again.json()).toMatchObject({ read: 2, inserted: 0, updated: 1, unchanged: 1, skipped: 0 });
  });

  it('takes vendor vehicle records and gzip, streamed in pieces', async () => {
    const records = JSON.parse(readFileSync(fixture('auctionsapi/vehicles-array.json'), 'utf8')) as unknown[];
    const ndjson = records.map((record) => JSON.stringify(record)).join('\n');
    const gz = gzipSync(ndjson);
    const pieces = Array.from({ length: Math.ceil(gz.length / 97) }, (_, i) => gz.subarray(i * 97, (i + 1) * 97));
    const res = await post(Readable.from(pieces), { 'content-type': 'application/x-ndjson; charset=utf-8' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      format: 'auctionsapi vehicle records (NDJSON, gzip)',
      read: 4,
      inserted: 3,
      updated: 0,
      unchanged: 0,
      skipped: 1,
      rejected: [{ line: 3, reason: 'the vehicle record has no lots' }],
      rejected_not_listed: 0,
    });
    expect((await t.repos.lots.findByVin('WBA3B5G55FNS17722'))[0]).toMatchObject({ auction: 'iaai', lot_id: 45289258, odometer: 243617 });
  });

  it(`lists the first ${REJECTED_LISTED} skipped records and counts the rest`, async () => {
    const body = Array.from({ length: REJECTED_LISTED + 5 }, (_, i) => JSON.stringify({ vin: 'bad', auction: 'copart', lot_id: i + 1 })).join('\n');
    const res = await post(body);
    expect(res.json()).toMatchObject({ read: REJECTED_LISTED + 5, skipped: REJECTED_LISTED + 5, rejected_not_listed: 5 });
    expect(res.json().rejected).toHaveLength(REJECTED_LISTED);
  });

  it('answers 415 for another content type, and 422 for an empty body or one that is not NDJSON', async () => {
    const json = await post(JSON.stringify(makeLot({ vin })), { 'content-type': 'application/json' });
    expect(json.statusCode).toBe(415);
    expect(json.json()).toEqual({ code: 'unsupported_media_type', message: 'Unsupported Content-Type application/json: send the lots as NDJSON, one JSON object per line, with Content-Type: application/x-ndjson.' });

    const empty = await post('');
    expect(empty.statusCode).toBe(422);
    expect(empty.json().message).toBe('The request body is empty: send lots as NDJSON, one JSON object per line.');

    const html = await post(readFileSync(fixture('copart/bot-wall.csv')));
    expect(html.statusCode).toBe(422);
    expect(html.json()).toEqual({
      code: 'invalid_request',
      message: 'The request body looks like an HTML page (a bot wall or a login page?), not CSV or JSON.',
      errors: { body: ['The request body looks like an HTML page (a bot wall or a login page?), not CSV or JSON.'] },
    });

    const csv = await post(readFileSync(fixture('copart/salesdata-49.csv')));
    expect(csv.statusCode).toBe(422);
    expect(csv.json().message).toBe('The request body is not NDJSON: the first line does not start with "{".');
  });

  it('answers 413 for a body declared larger than the limit, before reading it', async () => {
    const res = await post(Readable.from([Buffer.from(line(900))]), { 'content-length': String(ADMIN_LOTS_BODY_LIMIT + 1) });
    expect(res.statusCode).toBe(413);
    expect(res.json().message).toMatch(/^The request body is larger than the limit of 1073741824 bytes/);
  });

  it('is documented in the operators\' OpenAPI document under Admin, not in the customers\'', async () => {
    const customers = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    expect(customers.paths['/admin/v1/lots']).toBeUndefined();
    const doc = (await t.app.inject({ method: 'GET', url: '/admin/v1/openapi.json' })).json();
    const operation = doc.paths['/admin/v1/lots'].post;
    expect(operation.tags).toEqual(['Admin']);
    expect(Object.keys(operation.responses).sort()).toEqual(['200', '400', '401', '413', '415', '422', '5XX'].sort());
  });
});

// Every status this file's requests got is one the OpenAPI document lists for that operation.
afterAll(expectDocumentedStatuses);
