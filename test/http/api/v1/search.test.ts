import { Writable } from 'node:stream';
import { sql } from 'kysely';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOT_FIELDS } from '../../../../src/domain/lot.ts';
import { loggerOptions } from '../../../../src/observability/logger.ts';
import { buildAppOn, createTestApp, TEST_BASE_URL, testConfig, type TestApp } from '../../../support/app.ts';
import { DIALECTS } from '../../../support/databases.ts';
import { createCustomer, makeLot, validVin, type Customer } from '../../../support/fixtures.ts';
import { expectDocumentedStatuses } from '../../../support/documented-statuses.ts';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const ISO_UTC_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe.each(DIALECTS)('search API on %s', (dialect) => {
  let t: TestApp;
  const vin = validVin('1FTFW1ET5DFC1234');
  const unknownVin = validVin('2T1BURHE0JC01234');

  beforeAll(async () => {
    t = await createTestApp(dialect);
    await t.repos.lots.upsertBatch([
      makeLot({ vin, auction: 'copart', lot_id: 41000001, sale_date: '2023-03-01T17:00:00.000Z', price: 5100, images: ['https://cs.copart.com/v1/a.jpg'] }),
      makeLot({ vin, auction: 'iaai', lot_id: 35000002, sale_date: '2024-06-12T15:30:00.000Z', price: 7300, odometer: 88123 }),
      makeLot({ vin, auction: 'copart', lot_id: 41000003, sale_date: null }),
    ]);
  });
  afterAll(async () => t?.close());

  const search = (customer: Pick<Customer, 'token'>, searchVin: string, headers: Record<string, string> = {}) =>
    t.app.inject({ method: 'POST', url: '/api/v1/search', headers: { authorization: customer.token, ...headers }, payload: { vin: searchVin } });

  const countSearches = (c: Customer) => t.repos.searches.countForAccount(c.accountId);

  describe('success', () => {
    it('answers 200 JSON with the Report shape, every Lot field present, newest sale first', async () => {
      const customer = await createCustomer(t.repos);
      const res = await search(customer, vin);
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      const body = res.json();
      expect(Object.keys(body).sort()).toEqual(['lots', 'origin_timestamp', 'report_url', 'status', 'vin']);
      expect(body.status).toBe('success');
      expect(body.vin).toBe(vin);
      expect(body.origin_timestamp).toMatch(ISO_UTC_MS);
      expect(Math.abs(Date.parse(body.origin_timestamp) - Date.now())).toBeLessThan(60_000);
      expect(body.lots.map((lot: { lot_id: number }) => lot.lot_id)).toEqual([35000002, 41000001, 41000003]);
      for (const lot of body.lots) {
        expect(Object.keys(lot).sort()).toEqual([...LOT_FIELDS].sort());
        expect(Array.isArray(lot.images)).toBe(true);
      }
      expect(body.lots[2].sale_date).toBeNull();
      expect(body.lots[0].sale_date).toMatch(ISO_UTC_MS);
      expect(body.lots[1].images).toEqual(['https://cs.copart.com/v1/a.jpg']);
      expect(body.lots[0].body).toBeNull();
    });

    it('normalises the VIN (trim, upper-case) and answers GET exactly like POST', async () => {
      const customer = await createCustomer(t.repos);
      const post = await search(customer, `  ${vin.toLowerCase()} `);
      const get = await t.app.inject({ url: `/api/v1/search?vin=${encodeURIComponent(` ${vin.toLowerCase()}`)}`, headers: { authorization: customer.token } });
      expect(post.statusCode).toBe(200);
      expect(get.statusCode).toBe(200);
      const { report_url: a, origin_timestamp: _a, ...postRest } = post.json();
      const { report_url: b, origin_timestamp: _b, ...getRest } = get.json();
      expect(getRest).toEqual(postRest);
      expect(a).not.toBe(b);
    });

    it('builds report_url from PUBLIC_BASE_URL, never from the Host header, with a new uuid v4 each time', async () => {
      const customer = await createCustomer(t.repos);
      const first = await search(customer, vin, { host: 'attacker.example', 'x-forwarded-host': 'attacker.example' });
      const second = await search(customer, vin);
      const urls = [first.json().report_url, second.json().report_url] as string[];
      for (const url of urls) {
        expect(url.startsWith(`${TEST_BASE_URL}/report/`)).toBe(true);
        expect(url.slice(`${TEST_BASE_URL}/report/`.length)).toMatch(UUID_V4);
      }
      expect(urls[0]).not.toBe(urls[1]);
      const page = await t.app.inject({ url: new URL(urls[0]!).pathname });
      expect(page.statusCode).toBe(200);
      expect(page.headers['content-type']).toMatch(/^text\/html/);
    });

    it('accepts the bare token and the Bearer scheme in any case', async () => {
      const customer = await createCustomer(t.repos);
      for (const authorization of [customer.token, `Bearer ${customer.token}`, `bearer ${customer.token}`, `BEARER  ${customer.token}`]) {
        const res = await search({ token: authorization }, vin);
        expect(res.statusCode, authorization).toBe(200);
        await new Promise((resolve) => setTimeout(resolve, 510)); // standard plan: 2 per second
      }
    });

    it('stores one search record per counted search with account, token, VIN, outcome and report id', async () => {
      const customer = await createCustomer(t.repos, { quota: 100, rate: 100 });
      const found = await search(customer, vin);
      const missing = await search(customer, unknownVin);
      expect(found.statusCode).toBe(200);
      expect(missing.statusCode).toBe(404);
      const records = await t.repos.searches.listForAccount(customer.accountId);
      expect(records).toHaveLength(2);
      const foundRecord = records.find((r) => r.outcome === 'found')!;
      expect(foundRecord).toMatchObject({ token_id: customer.tokenId, vin });
      expect(found.json().report_url.endsWith(foundRecord.report_id!)).toBe(true);
      expect(records.find((r) => r.outcome === 'not_found')).toMatchObject({ vin: unknownVin, report_id: null });
    });
  });

  describe('limit headers', () => {
    it('carry RateLimit-Policy, RateLimit and X-RateLimit-* on 200, 404 and 429', async () => {
      const customer = await createCustomer(t.repos, { quota: 3, rate: 50 });
      const ok = await search(customer, vin);
      expect(ok.headers['ratelimit-policy']).toMatch(/^"second";q=50;w=1, "month";q=3;w=\d+$/);
      expect(ok.headers.ratelimit).toMatch(/^"second";r=49;t=1, "month";r=2;t=\d+$/);
      expect(ok.headers['x-ratelimit-limit']).toBe('50');
      expect(ok.headers['x-ratelimit-remaining']).toBe('49');
      const notFound = await search(customer, unknownVin);
      expect(notFound.statusCode).toBe(404);
      expect(notFound.headers.ratelimit).toMatch(/"month";r=1;/);
      expect(notFound.headers['x-ratelimit-remaining']).toBe('48');
      await search(customer, vin);
      const over = await search(customer, vin);
      expect(over.statusCode).toBe(429);
      expect(over.headers.ratelimit).toMatch(/"month";r=0;t=\d+$/);
      expect(over.headers['ratelimit-policy']).toBeDefined();
      expect(over.headers['x-ratelimit-limit']).toBe('50');
    });

    it('reports the billing period of a monthly subscription as the month window', async () => {
      const startedAt = new Date(Date.now() - 3 * 24 * 3600 * 1000);
      const customer = await createCustomer(t.repos, { quota: 10, rate: 10, startedAt });
      const res = await search(customer, vin);
      const month = /"month";q=10;w=(\d+)/.exec(res.headers['ratelimit-policy'] as string);
      const days = Number(month![1]) / 86400;
      expect(days).toBeGreaterThanOrEqual(28);
      expect(days).toBeLessThanOrEqual(31);
      const reset = Number(/"month";r=9;t=(\d+)/.exec(res.headers.ratelimit as string)![1]);
      expect(reset).toBeLessThanOrEqual(Number(month![1]) - 3 * 86400 + 5);
    });
  });

  describe('401 Unauthenticated', () => {
    const cases: [string, Record<string, string>][] = [
      ['no Authorization header', {}],
      ['an empty header', { authorization: '' }],
      ['a malformed header', { authorization: 'Basic dXNlcjpwYXNz' }],
      ['an unknown token', { authorization: 'vh_live_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' }],
      ['an unknown Bearer token', { authorization: 'Bearer vh_live_BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB' }],
    ];
    it.each(cases)('with %s: exactly {"message":"Unauthenticated."} and WWW-Authenticate', async (_name, headers) => {
      for (const method of ['GET', 'POST'] as const) {
        const res = await t.app.inject({ method, url: `/api/v1/search${method === 'GET' ? `?vin=${vin}` : ''}`, headers, ...(method === 'POST' ? { payload: { vin } } : {}) });
        expect(res.statusCode).toBe(401);
        expect(res.body).toBe('{"message":"Unauthenticated."}');
        expect(res.headers['content-type']).toMatch(/^application\/json/);
        expect(res.headers['www-authenticate']).toMatch(/^Bearer realm="vinhistory"/);
      }
    });

    it('refuses a token in the query string', async () => {
      const customer = await createCustomer(t.repos);
      const res = await t.app.inject({ url: `/api/v1/search?vin=${vin}&token=${customer.token}&api_token=${customer.token}` });
      expect(res.statusCode).toBe(401);
    });

    it('refuses a revoked token on the very next request, and comes before every other check', async () => {
      const customer = await createCustomer(t.repos, { quota: 1, rate: 1 });
      expect((await search(customer, vin)).statusCode).toBe(200);
      expect(await t.repos.tokens.revokeByToken(customer.token)).toBe(true);
      const res = await search(customer, 'not a vin');
      expect(res.statusCode).toBe(401);
      expect(res.body).toBe('{"message":"Unauthenticated."}');
      expect(await countSearches(customer)).toBe(1);
    });
  });

  describe('402 no active subscription', () => {
    it('for a cancelled subscription, before VIN validation, not counted', async () => {
      const customer = await createCustomer(t.repos);
      await t.repos.subscriptions.cancelActive(customer.accountId);
      const res = await search(customer, 'bad vin');
      expect(res.statusCode).toBe(402);
      expect(res.json().message).toMatch(/subscription/i);
      expect(await countSearches(customer)).toBe(0);
    });

    it('for an account that never had one, and for one that starts in the future', async () => {
      const account = await t.repos.accounts.create(`nosub-${Date.now()}@example.com`);
      const { token } = await t.repos.tokens.create(account.id, 'x');
      expect((await search({ token }, vin)).statusCode).toBe(402);
      const future = await createCustomer(t.repos, { startedAt: new Date(Date.now() + 86400_000) });
      expect((await search(future, vin)).statusCode).toBe(402);
    });
  });

  describe('404 no records', () => {
    it('says no records were found and counts against the quota', async () => {
      const customer = await createCustomer(t.repos, { quota: 5, rate: 10 });
      const res = await search(customer, unknownVin);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ code: 'no_records', message: `No auction records were found for VIN ${unknownVin}.` });
      expect(await t.repos.usageCounters.usedInPeriod(customer.accountId, (await t.repos.searches.listForAccount(customer.accountId))[0]!.period_start)).toBe(1);
    });
  });

  describe('404/405 routing', () => {
    it('answers JSON 404 for unknown API paths', async () => {
      for (const url of ['/api/v1/nothing', '/api/v2/search', '/api/', '/api']) {
        const res = await t.app.inject({ url });
        expect(res.statusCode, url).toBe(404);
        expect(res.headers['content-type']).toMatch(/^application\/json/);
        expect(typeof res.json().message).toBe('string');
      }
    });

    it('answers 405 with Allow for wrong methods, HEAD included', async () => {
      for (const method of ['PUT', 'PATCH', 'DELETE', 'HEAD'] as const) {
        const customer = await createCustomer(t.repos);
        const res = await t.app.inject({ method, url: '/api/v1/search', headers: { authorization: customer.token } });
        expect(res.statusCode, method).toBe(405);
        expect(res.headers.allow).toBe('GET, POST');
        if (method !== 'HEAD') expect(res.json().message).toMatch(/not allowed/);
        expect(await countSearches(customer)).toBe(0);
      }
    });
  });

  describe('413 body too large', () => {
    it('refuses a body over 4 KiB with a JSON message, not counted', async () => {
      const customer = await createCustomer(t.repos);
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/search',
        headers: { authorization: customer.token, 'content-type': 'application/json' },
        payload: JSON.stringify({ vin, padding: 'x'.repeat(5000) }),
      });
      expect(res.statusCode).toBe(413);
      expect(res.json().message).toMatch(/too large/);
      expect(await countSearches(customer)).toBe(0);
    });
  });

  describe('422 invalid VIN', () => {
    const invalid: [string, unknown, RegExp][] = [
      ['too short', 'ABC123', /exactly 17/],
      ['too long', `${vin}1`, /exactly 17/],
      ['with I, O or Q', '1HGCM82633A00I352', /cannot have: I/],
      ['with a wrong check digit', `${vin.slice(0, 8)}${vin[8] === '1' ? '2' : '1'}${vin.slice(9)}`, /check digit/],
      ['blank', '   ', /required/],
      ['not a string', 12345678901234567, /string/],
      ['null', null, /string/],
    ];
    it.each(invalid)('POST with a VIN %s: errors.vin says what is wrong, not counted', async (_name, value, message) => {
      const customer = await createCustomer(t.repos);
      const res = await t.app.inject({ method: 'POST', url: '/api/v1/search', headers: { authorization: customer.token }, payload: { vin: value } });
      expect(res.statusCode).toBe(422);
      const body = res.json();
      expect(typeof body.message).toBe('string');
      expect(body.errors.vin.join(' ')).toMatch(message);
      expect(await countSearches(customer)).toBe(0);
    });

    it('POST without vin, with an empty body, and GET without vin', async () => {
      const customer = await createCustomer(t.repos);
      const auth = { authorization: customer.token };
      const missing = await t.app.inject({ method: 'POST', url: '/api/v1/search', headers: auth, payload: {} });
      expect(missing.statusCode).toBe(422);
      expect(missing.json().errors.vin).toEqual(['The vin field is required.']);
      const empty = await t.app.inject({ method: 'POST', url: '/api/v1/search', headers: { ...auth, 'content-type': 'application/json' }, payload: '' });
      expect(empty.statusCode).toBe(422);
      const get = await t.app.inject({ url: '/api/v1/search', headers: auth });
      expect(get.statusCode).toBe(422);
      expect(get.json().errors.vin).toEqual(['The vin field is required.']);
      const twice = await t.app.inject({ url: `/api/v1/search?vin=${vin}&vin=${vin}`, headers: auth });
      expect(twice.statusCode).toBe(422);
      expect(await countSearches(customer)).toBe(0);
    });

    it('checks only the structure of VINs from outside North America', async () => {
      const customer = await createCustomer(t.repos, { rate: 10 });
      const european = 'WDB1240821A123456'; // position 9 is not a check digit outside North America
      const res = await search(customer, european);
      expect(res.statusCode).toBe(404);
    });

    it('answers 400 for a body that is not JSON and 415 for a non-JSON content type', async () => {
      const customer = await createCustomer(t.repos);
      const badJson = await t.app.inject({ method: 'POST', url: '/api/v1/search', headers: { authorization: customer.token, 'content-type': 'application/json' }, payload: '{"vin": ' });
      expect(badJson.statusCode).toBe(400);
      expect(badJson.json().message).toMatch(/not valid JSON/);
      const form = await t.app.inject({ method: 'POST', url: '/api/v1/search', headers: { authorization: customer.token, 'content-type': 'text/plain' }, payload: vin });
      expect(form.statusCode).toBe(415);
      expect(typeof form.json().message).toBe('string');
    });
  });

  describe('429 limits', () => {
    it('per-second rate: a burst of `rate` passes, the next is 429 with Retry-After, not counted', async () => {
      const customer = await createCustomer(t.repos, { quota: 100, rate: 3 });
      const responses = await Promise.all(Array.from({ length: 5 }, () => search(customer, vin)));
      const codes = responses.map((r) => r.statusCode).sort();
      expect(codes).toEqual([200, 200, 200, 429, 429]);
      const limited = responses.find((r) => r.statusCode === 429)!;
      expect(limited.json().message).toMatch(/rate limit/i);
      expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(limited.headers['x-ratelimit-remaining']).toBe('0');
      expect(await countSearches(customer)).toBe(3);
      await new Promise((resolve) => setTimeout(resolve, 1050));
      expect((await search(customer, vin)).statusCode).toBe(200);
    });

    it('monthly quota: 429 saying so once used up, with Retry-After until the period ends, not counted', async () => {
      const customer = await createCustomer(t.repos, { quota: 2, rate: 100 });
      expect((await search(customer, vin)).statusCode).toBe(200);
      expect((await search(customer, unknownVin)).statusCode).toBe(404);
      const res = await search(customer, vin);
      expect(res.statusCode).toBe(429);
      expect(res.json().message).toMatch(/quota/i);
      const retryAfter = Number(res.headers['retry-after']);
      expect(retryAfter).toBeGreaterThan(20 * 86400);
      expect(retryAfter).toBeLessThanOrEqual(31 * 86400);
      expect(await countSearches(customer)).toBe(2);
    });

    it('checks VIN validity before the rate, and the rate before the quota', async () => {
      const customer = await createCustomer(t.repos, { quota: 1, rate: 1 });
      expect((await search(customer, vin)).statusCode).toBe(200);
      expect((await search(customer, 'short')).statusCode).toBe(422);
      const res = await search(customer, vin);
      expect(res.statusCode).toBe(429);
      expect(res.json().message).toMatch(/rate limit/i);
      await new Promise((resolve) => setTimeout(resolve, 1050));
      const quota = await search(customer, vin);
      expect(quota.statusCode).toBe(429);
      expect(quota.json().message).toMatch(/quota/i);
    });
  });

  describe('Idempotency-Key', () => {
    it('returns the same report for a repeat within 24 hours and counts it once', async () => {
      const customer = await createCustomer(t.repos, { quota: 10, rate: 100 });
      const first = await search(customer, vin, { 'idempotency-key': 'order-42' });
      const again = await search(customer, vin.toLowerCase(), { 'idempotency-key': 'order-42' });
      expect(first.statusCode).toBe(200);
      expect(again.statusCode).toBe(200);
      expect(again.json()).toEqual(first.json());
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(await countSearches(customer)).toBe(1);
      expect(again.headers.ratelimit).toMatch(/"month";r=9;/);
      const other = await createCustomer(t.repos, { quota: 10, rate: 100 });
      const otherAccount = await search(other, vin, { 'idempotency-key': 'order-42' });
      expect(otherAccount.json().report_url).not.toBe(first.json().report_url);
    });

    it('replays a counted 404 as a 404 without counting it again', async () => {
      const customer = await createCustomer(t.repos, { quota: 10, rate: 100 });
      expect((await search(customer, unknownVin, { 'idempotency-key': 'k-404' })).statusCode).toBe(404);
      expect((await search(customer, unknownVin, { 'idempotency-key': 'k-404' })).statusCode).toBe(404);
      expect(await countSearches(customer)).toBe(1);
    });

    it('refuses a key reused for another VIN, and a key over 255 characters, with 422', async () => {
      const customer = await createCustomer(t.repos, { quota: 10, rate: 100 });
      await search(customer, vin, { 'idempotency-key': 'k1' });
      const conflict = await search(customer, unknownVin, { 'idempotency-key': 'k1' });
      expect(conflict.statusCode).toBe(422);
      expect(conflict.json().errors['Idempotency-Key'][0]).toMatch(/used for VIN/);
      const long = await search(customer, vin, { 'idempotency-key': 'k'.repeat(256) });
      expect(long.statusCode).toBe(422);
      expect(long.json().errors['Idempotency-Key']).toBeDefined();
      expect((await search(customer, vin, { 'idempotency-key': 'k'.repeat(255) })).statusCode).toBe(200);
      expect(await countSearches(customer)).toBe(2);
    });

    it("words a malformed key or VIN with the service's messages, not the document's patterns", async () => {
      const customer = await createCustomer(t.repos, { quota: 10, rate: 100 });
      for (const key of ['k'.repeat(256), 'two words', 'caf\u00e9']) {
        const res = await search(customer, vin, { 'idempotency-key': key });
        expect(res.statusCode, key).toBe(422);
        expect(res.json()).toEqual({
          code: 'invalid_request',
          message: 'The Idempotency-Key header must be 1 to 255 visible ASCII characters.',
          errors: { 'Idempotency-Key': ['The Idempotency-Key header must be 1 to 255 visible ASCII characters.'] },
        });
      }
      const get = await t.app.inject({ url: '/api/v1/search?vin=ABC123', headers: { authorization: customer.token } });
      expect(get.json().errors).toEqual({ vin: ['The vin must be exactly 17 characters; got 6.'] });
      expect(await countSearches(customer)).toBe(0);
    });

    it('counts once when the same new key arrives many times at once', async () => {
      const customer = await createCustomer(t.repos, { quota: 10, rate: 100 });
      const responses = await Promise.all(Array.from({ length: 8 }, () => search(customer, vin, { 'idempotency-key': 'burst' })));
      expect(responses.map((r) => r.statusCode)).toEqual(Array(8).fill(200));
      expect(new Set(responses.map((r) => r.json().report_url)).size).toBe(1);
      expect(await countSearches(customer)).toBe(1);
    });
  });

  describe('5xx', () => {
    /**
     * A fault inside the commit's transaction: the search record's insert fails for this account,
     * after its usage counter was incremented and its report written in the same transaction.
     */
    async function failSearchRecordsOf(accountId: string, message: string): Promise<() => Promise<void>> {
      const account = sql.lit(accountId);
      if (dialect === 'sqlite') {
        // A trigger lives in its table's file: the searches' tables are in the attached searches file (0028).
        await sql`create trigger searches.fail_search_record before insert on searches when new.account_id = ${account} begin select raise(abort, ${sql.lit(message)}); end`.execute(t.db.kysely);
        return async () => {
          await sql`drop trigger searches.fail_search_record`.execute(t.db.kysely);
        };
      }
      await sql`create function fail_search_record() returns trigger language plpgsql as $$ begin raise exception ${sql.lit(message)}; end $$`.execute(t.db.kysely);
      await sql`create trigger fail_search_record before insert on searches for each row when (new.account_id = ${account}) execute function fail_search_record()`.execute(t.db.kysely);
      return async () => {
        await sql`drop trigger fail_search_record on searches`.execute(t.db.kysely);
        await sql`drop function fail_search_record()`.execute(t.db.kysely);
      };
    }

    it('answers a JSON message with a request id and no internals, logs it, and counts nothing', async () => {
      const customer = await createCustomer(t.repos, { quota: 10, rate: 100 });
      const lines: string[] = [];
      const logger = pino(loggerOptions({ logLevel: 'info' }), new Writable({
        write(chunk, _encoding, done) {
          lines.push(...chunk.toString().split('\n').filter(Boolean));
          done();
        },
      }));
      const app = await buildAppOn({ config: testConfig(), db: t.db, rateLimiter: t.rateLimiter, loggerInstance: logger });
      const restore = await failSearchRecordsOf(customer.accountId, 'SQLITE_CORRUPT: database disk image is malformed at /secret/path');
      try {
        const res = await app.inject({ method: 'POST', url: '/api/v1/search', headers: { authorization: customer.token }, payload: { vin } });
        expect(res.statusCode).toBe(500);
        const body = res.json();
        expect(Object.keys(body).sort()).toEqual(['code', 'message']);
        expect(body.code).toBe('internal_error');
        expect(body.message).not.toMatch(/SQLITE|secret|malformed|stack/i);
        expect(body.message).toContain(res.headers['x-request-id'] as string);

        const logged = lines.map((line) => JSON.parse(line)).filter((entry) => entry.msg === 'request failed');
        expect(logged).toHaveLength(1);
        expect(logged[0]).toMatchObject({ level: 50, reqId: res.headers['x-request-id'] });
        expect(logged[0].err.message).toContain('SQLITE_CORRUPT: database disk image is malformed at /secret/path');

        expect(await countSearches(customer)).toBe(0);
        expect(await t.repos.reports.countForAccount(customer.accountId)).toBe(0);
        expect((await app.services.usage.forAccount(customer.accountId))?.used).toBe(0);
      } finally {
        await restore();
        await app.close();
      }
    });
  });
});

// Every status this file's requests got is one the OpenAPI document lists for that operation.
afterAll(expectDocumentedStatuses);
