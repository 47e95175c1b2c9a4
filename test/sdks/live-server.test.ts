import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AuthenticationError,
  NotFoundError,
  RateLimitError,
  UnprocessableEntityError,
  Vinhistory,
  VinhistoryApiError,
  VinhistoryConnectionError,
  parseWebhookEvent,
  verifyWebhookSignature,
  type ResponseInfo,
} from '../../sdks/typescript/src/index.ts';
import { buildAppOn, testConfig } from '../support/app.ts';
import { createTestDatabase, type TestDatabase } from '../support/databases.ts';
import { createCustomer, makeLot, validVin, type Customer } from '../support/fixtures.ts';
import { pythonVenv, pythonVenvAvailable } from '../support/python-venv.ts';
import { MemoryRateLimiter } from '../../src/limits/rate/memory-rate-limiter.ts';
import type { App } from '../../src/app.ts';
import { Receiver, type Received } from '../webhooks/receiver.ts';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Both SDKs against the real service listening on 127.0.0.1 (one app and one server for the
 * file): the TypeScript SDK imported from sdks/typescript, the Python one run by one Python
 * process (test/sdks/python-calls.py) from a virtualenv made once and cached. Each: found and
 * not found, refused input, a wrong token, paging, the retry rule of counted calls, and the
 * webhook signature of a real delivery. The standalone typecheck of sdks/typescript (its own
 * tsconfig, `"types": []`) runs beside them.
 */
describe('the SDKs against a live server', () => {
  let database: TestDatabase;
  let app: App;
  let rateLimiter: MemoryRateLimiter;
  let baseUrl: string;
  let dataDir: string;
  let receiver: Receiver;
  let delivery: Received;
  let webhookSecret: string;
  let customer: Customer;
  const vin = validVin('1HGCM82633A10001');
  const lotId = 91000001;
  const unknownVin = validVin('1HGCM82633A19999');
  let typecheck: Promise<unknown>;

  beforeAll(async () => {
    // Started first: it runs while the server and the virtualenv are made.
    typecheck = run(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', path.join(ROOT, 'sdks/typescript'), '--noEmit']);
    typecheck.catch(() => {});
    database = await createTestDatabase('sqlite');
    dataDir = mkdtempSync(path.join(tmpdir(), 'vinhistory-sdks-'));
    rateLimiter = new MemoryRateLimiter();
    app = await buildAppOn({ config: testConfig({ OUTBOUND_ALLOW_PRIVATE: 'true', DATA_DIR: dataDir }), db: database.db, rateLimiter });
    await database.repos.lots.upsertBatch([makeLot({ vin, auction: 'copart', lot_id: lotId, price: 5200 }), makeLot({ vin, auction: 'iaai', lot_id: lotId + 1 })]);
    const address = await app.listen({ host: '127.0.0.1', port: 0 });
    baseUrl = address;
    customer = await createCustomer(database.repos, { quota: 1000, rate: 1000 });
    receiver = await new Receiver().start();
    // The webhook both SDKs check: a real ping the service signed and delivered.
    const client = new Vinhistory({ token: customer.token, baseUrl });
    const endpoint = await client.setWebhook({ url: receiver.url });
    webhookSecret = endpoint.secret!;
    await client.testWebhook();
    delivery = receiver.received[0]!;
  });
  afterAll(async () => {
    await receiver?.stop();
    await app?.close();
    await rateLimiter?.close();
    await database?.destroy();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  describe('TypeScript', () => {
    it('typechecks alone, with its own tsconfig and no ambient types', async () => {
      await expect(typecheck).resolves.toBeDefined();
    });

    it('searches, looks up a lot, and reads the answer headers', async () => {
      const client = new Vinhistory({ token: customer.token, baseUrl });
      const answers: ResponseInfo[] = [];
      const report = await client.searchPost({ vin }, {}, { onResponse: (answer) => answers.push(answer) });
      expect(report.vin).toBe(vin);
      expect(report.lots.map((lot) => lot.lot_id).sort()).toEqual([lotId, lotId + 1]);
      expect(report.report_url).toMatch(/\/report\/[0-9a-f-]{36}$/);
      expect(answers.map((answer) => answer.status)).toEqual([200]);
      expect(answers[0]!.headers.get('ratelimit')).toBeTruthy();
      expect((await client.searchGet({ vin: ` ${vin.toLowerCase()} ` })).vin).toBe(vin);
      expect((await client.lotLookup({ auction: 'copart', lot_id: lotId })).vin).toBe(vin);
      expect((await client.usage()).used).toBe(3);
    });

    it('throws typed errors with status, code, message and the refused fields', async () => {
      const client = new Vinhistory({ token: customer.token, baseUrl });
      const missing = await client.searchGet({ vin: unknownVin }).catch((error: unknown) => error);
      expect(missing).toBeInstanceOf(NotFoundError);
      expect(missing).toMatchObject({ status: 404, code: 'no_records' });
      expect((missing as NotFoundError).requestId).toBeTruthy();
      const invalid = await client.searchGet({ vin: 'NOT-A-VIN' }).catch((error: unknown) => error);
      expect(invalid).toBeInstanceOf(UnprocessableEntityError);
      expect(invalid).toMatchObject({ status: 422, code: 'invalid_request' });
      expect((invalid as VinhistoryApiError).errors?.vin?.length).toBeGreaterThan(0);
      const stranger = new Vinhistory({ token: `vh_live_${'0'.repeat(32)}`, baseUrl });
      const refused = await stranger.usage().catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(AuthenticationError);
      expect(refused).toMatchObject({ status: 401, code: null, message: 'Unauthenticated.' });
      const nowhere = new Vinhistory({ token: customer.token, baseUrl: 'http://127.0.0.1:1' });
      await expect(nowhere.usage()).rejects.toBeInstanceOf(VinhistoryConnectionError);
    });

    it('pages through the watches with the cursor, and deletes one', async () => {
      const owner = await createCustomer(database.repos);
      const client = new Vinhistory({ token: owner.token, baseUrl });
      const created = [];
      for (const stem of ['1HGCM82633A20001', '1HGCM82633A20002', '1HGCM82633A20003']) created.push(await client.createWatch({ vin: validVin(stem) }));
      const pages: string[] = [];
      const seen: string[] = [];
      for await (const watch of client.iterListWatches({ limit: 1 }, { onResponse: () => pages.push('page') })) seen.push(watch.id);
      expect(seen.sort()).toEqual(created.map((watch) => watch.id).sort());
      expect(pages.length).toBeGreaterThanOrEqual(3);
      await expect(client.deleteWatch({ id: created[0]!.id })).resolves.toBeUndefined();
      await expect(client.deleteWatch({ id: created[0]!.id })).rejects.toMatchObject({ status: 404, code: 'not_found' });
    });

    it('retries a counted 429 only with an Idempotency-Key, after Retry-After, and never past the longest wait', async () => {
      const slow = await createCustomer(database.repos, { rate: 1 });
      const client = new Vinhistory({ token: slow.token, baseUrl, maxRetries: 2 });
      await client.searchGet({ vin });
      const statuses: number[] = [];
      const unkeyed = await client.searchGet({ vin }, { onResponse: ({ status }) => statuses.push(status) }).catch((error: unknown) => error);
      expect(unkeyed).toBeInstanceOf(RateLimitError);
      expect(unkeyed).toMatchObject({ code: 'rate_limited' });
      expect((unkeyed as RateLimitError).retryAfter).toBeGreaterThanOrEqual(1);
      expect(statuses).toEqual([429]);
      statuses.length = 0;
      expect((await client.searchGet({ vin, idempotencyKey: 'ts-retry-1' }, { onResponse: ({ status }) => statuses.push(status) })).vin).toBe(vin);
      expect(statuses).toEqual([429, 200]);

      const spent = await createCustomer(database.repos, { quota: 1 });
      const quotaClient = new Vinhistory({ token: spent.token, baseUrl });
      await quotaClient.searchGet({ vin });
      statuses.length = 0;
      const over = await quotaClient.searchGet({ vin, idempotencyKey: 'ts-quota-1' }, { onResponse: ({ status }) => statuses.push(status) }).catch((error: unknown) => error);
      expect(over).toMatchObject({ status: 429, code: 'quota_exceeded' });
      expect(statuses).toEqual([429]);
    });

    it('checks the signature of a real delivery', async () => {
      const header = String(delivery.headers['vinhistory-signature']);
      expect(await verifyWebhookSignature(header, delivery.body, webhookSecret)).toBe(true);
      expect(await verifyWebhookSignature(header, new TextEncoder().encode(delivery.body), webhookSecret)).toBe(true);
      expect(await verifyWebhookSignature(header, delivery.body, 'whsec_wrong')).toBe(false);
      expect(await verifyWebhookSignature(header, `${delivery.body} `, webhookSecret)).toBe(false);
      expect(await verifyWebhookSignature(header, delivery.body, webhookSecret, { nowSeconds: Math.floor(Date.now() / 1000) + 3600 })).toBe(false);
      expect((await parseWebhookEvent(header, delivery.body, webhookSecret)).type).toBe('ping');
      await expect(parseWebhookEvent(header, delivery.body, 'whsec_wrong')).rejects.toThrow(/signature/);
    });
  });

  describe.runIf(pythonVenvAvailable())('Python', () => {
    it('makes the same calls, sync and asyncio, from one process', async () => {
      const python = await pythonVenv(path.join(ROOT, 'sdks/python/requirements.txt'));
      const own = await createCustomer(database.repos, { quota: 1000, rate: 1000 });
      const slow = await createCustomer(database.repos, { rate: 1 });
      const spent = await createCustomer(database.repos, { quota: 1 });
      await new Vinhistory({ token: spent.token, baseUrl }).searchGet({ vin });
      const watchVins = ['1HGCM82633A30001', '1HGCM82633A30002', '1HGCM82633A30003'].map((stem) => validVin(stem));
      const { stdout } = await run(python, [path.join(ROOT, 'test/sdks/python-calls.py')], {
        env: {
          PATH: process.env.PATH ?? '',
          PYTHONPATH: path.join(ROOT, 'sdks/python'),
          PYTHONDONTWRITEBYTECODE: '1',
          BASE_URL: baseUrl,
          TOKEN: own.token,
          SLOW_TOKEN: slow.token,
          SPENT_TOKEN: spent.token,
          VIN: vin,
          UNKNOWN_VIN: unknownVin,
          LOT_ID: String(lotId),
          WATCH_VINS: watchVins.join(','),
          WEBHOOK_BODY: delivery.body,
          WEBHOOK_SIGNATURE: String(delivery.headers['vinhistory-signature']),
          WEBHOOK_SECRET: webhookSecret,
        },
      });
      const seen = JSON.parse(stdout);
      expect(seen.search).toMatchObject({ vin, lots: expect.arrayContaining([lotId, lotId + 1]) });
      expect(seen.search.ratelimit).toBeTruthy();
      expect(seen.search_get).toBe(vin);
      expect(seen.lot_lookup).toBe(vin);
      expect(seen.not_found).toMatchObject({ class: 'NotFoundError', status: 404, code: 'no_records' });
      expect(seen.not_found.request_id).toBeTruthy();
      expect(seen.invalid).toMatchObject({ class: 'UnprocessableEntityError', status: 422, code: 'invalid_request' });
      expect(seen.invalid.errors.vin.length).toBeGreaterThan(0);
      expect(seen.unauthenticated).toEqual(expect.objectContaining({ class: 'AuthenticationError', status: 401, code: null, message: 'Unauthenticated.' }));
      expect(seen.usage).toBe(4);
      expect([...seen.watches_paged].sort()).toEqual([...seen.watch_ids].sort());
      expect(seen.delete_again).toMatchObject({ class: 'NotFoundError', code: 'not_found' });
      expect(seen.no_key).toMatchObject({ class: 'RateLimitError', code: 'rate_limited' });
      expect(seen.no_key_attempts).toEqual([429]);
      expect(seen.with_key).toBe(vin);
      expect(seen.with_key_attempts).toEqual([429, 200]);
      expect(seen.quota).toMatchObject({ class: 'RateLimitError', code: 'quota_exceeded' });
      expect(seen.quota_attempts).toEqual([429]);
      expect(seen.async).toEqual({ vin, watches_paged: expect.any(Array), not_found_code: 'no_records' });
      expect([...seen.async.watches_paged].sort()).toEqual(seen.watch_ids.slice(1).sort());
      expect(seen.mock_free).toEqual({ answer: 1, sent: 3, waits: [2, 2] });
      expect(seen.mock_bound).toMatchObject({ error: { class: 'ServiceUnavailableError', status: 503, code: 'service_busy' }, sent: 3 });
      expect(seen.mock_unkeyed).toMatchObject({ error: { class: 'ServiceUnavailableError' }, sent: 1 });
      expect(seen.mock_keyed).toEqual({ answer: 'V', keys: ['k-1', 'k-1'] });
      expect(seen.mock_502).toMatchObject({ error: { class: 'InternalServerError', status: 502 }, sent: 1 });
      expect(seen.signature).toEqual({ valid: true, wrong_secret: false, altered: false, too_old: false, event_type: 'ping' });
    });
  });
});
