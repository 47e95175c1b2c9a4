import { mkdtempSync, rmSync, writeFileSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.ts';
import { MemoryRateLimiter } from '../../src/limits/rate/memory-rate-limiter.ts';
import { verifySignature } from '../../src/webhooks/signing.ts';
import { FIRST_RETRY_MS } from '../../src/webhooks/retry-schedule.ts';
import { buildAppOn, testConfig } from '../support/app.ts';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../support/databases.ts';
import { createCustomer, makeLot, validVin, type Customer } from '../support/fixtures.ts';
import { expectDocumentedStatuses } from '../support/documented-statuses.ts';
import { Receiver } from './receiver.ts';

const HOUR = 60 * 60 * 1000;

describe.each(DIALECTS)('lot events and their delivery on %s', (dialect) => {
  let database: TestDatabase;
  let app: App;
  let receiver: Receiver;
  let operatorToken: string;
  let dataDir: string;
  // The clock the services read: the tests move it to reach retry times without waiting.
  let clock = 0;
  const now = () => new Date(clock);

  beforeAll(async () => {
    database = await createTestDatabase(dialect);
    dataDir = mkdtempSync(path.join(tmpdir(), 'vinhistory-webhooks-'));
    app = await buildAppOn({
      config: testConfig({ OUTBOUND_ALLOW_PRIVATE: 'true', DATA_DIR: dataDir }),
      db: database.db,
      rateLimiter: new MemoryRateLimiter(),
      now,
      overrides: { random: () => 0.5 },
    });
    await app.ready();
    receiver = await new Receiver().start();
    operatorToken = (await database.repos.operatorTokens.create('scraper')).token;
    // Ahead of the real time the subscriptions and imports are stamped with, so that they are in force and due.
    clock = Date.now() + 60_000;
  });
  afterAll(async () => {
    await app?.close();
    await receiver?.stop();
    await database?.destroy();
    rmSync(dataDir, { recursive: true, force: true });
    expectDocumentedStatuses();
  });

  const api = (token: string, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown) =>
    app.inject({ method, url, headers: { authorization: token }, ...(payload !== undefined ? { payload: payload as object } : {}) });
  const postLots = (lots: object[]) =>
    app.inject({
      method: 'POST',
      url: '/admin/v1/lots',
      headers: { authorization: operatorToken, 'content-type': 'application/x-ndjson' },
      payload: lots.map((lot) => JSON.stringify(lot)).join('\n') + '\n',
    });
  const deliverAll = async () => {
    let total = 0;
    for (let n = await app.services.deliveryWorker.runOnce(); n > 0; n = await app.services.deliveryWorker.runOnce()) total += n;
    return total;
  };

  /** A customer with an endpoint on the receiver; returns its secret. */
  async function subscriber(options: { plan?: string } = {}): Promise<Customer & { secret: string }> {
    const customer = await createCustomer(database.repos, options);
    const res = await api(customer.token, 'PUT', '/api/v1/webhook', { url: receiver.url });
    expect(res.statusCode).toBe(201);
    return { ...customer, secret: res.json().secret };
  }

  describe('events', () => {
    it('lot.created and lot.updated (with changed) arrive from POST /admin/v1/lots, signed; an unchanged re-import makes none', async () => {
      const customer = await subscriber();
      const vin = validVin('5YJ3E1EA7KF00101');
      expect((await api(customer.token, 'POST', '/api/v1/watches', { vin })).statusCode).toBe(201);
      const lot = makeLot({ vin, lot_id: 70000001, price: 5000, odometer: 12000 });
      const before = receiver.received.length;

      expect((await postLots([lot])).statusCode).toBe(200);
      expect(await deliverAll()).toBe(1);
      const [created] = receiver.events().slice(before);
      expect(created).toMatchObject({ id: expect.stringMatching(/^evt_/), type: 'lot.created', data: { vin, changed: [], previous: {}, lot: { lot_id: 70000001, price: 5000 } } });
      const raw = receiver.received.at(-1)!;
      expect(raw.headers['vinhistory-event-id']).toBe(created!.id);
      expect(verifySignature(String(raw.headers['vinhistory-signature']), raw.body, customer.secret, Math.floor(clock / 1000))).toBe(true);
      expect(verifySignature(String(raw.headers['vinhistory-signature']), raw.body, 'whsec_wrong', Math.floor(clock / 1000))).toBe(false);

      await postLots([lot]);
      expect(await deliverAll()).toBe(0);

      await postLots([{ ...lot, price: 6100, primary_damage: 'FRONT END', images: ['https://img.example/1.jpg'] }]);
      expect(await deliverAll()).toBe(1);
      expect(receiver.events().at(-1)).toMatchObject({ type: 'lot.updated', data: { changed: ['price', 'primary_damage', 'images'], lot: { price: 6100 } } });
      // Each change's value before it, beside `changed` (lot history, issue 29).
      expect(receiver.events().at(-1)!.data.previous).toEqual({ price: lot.price, primary_damage: lot.primary_damage, images: lot.images });
    });

    it('arrive from the import command path and the seed/demo path (importFiles, importRecords)', async () => {
      const customer = await subscriber();
      const fileVin = validVin('3VWFE21C04M00201');
      const recordVin = validVin('3VWFE21C04M00202');
      await api(customer.token, 'POST', '/api/v1/watches', { vin: fileVin });
      await api(customer.token, 'POST', '/api/v1/watches', { vin: recordVin });
      const file = path.join(dataDir, 'lots.ndjson');
      writeFileSync(file, `${JSON.stringify(makeLot({ vin: fileVin, lot_id: 70000201 }))}\n${JSON.stringify(makeLot({ vin: validVin('3VWFE21C04M00299') }))}\n`);
      const [result] = await app.services.ingest.importFiles([file], { format: 'auto', batchSize: 250, enrich: false, worker: false, progress: false, signal: new AbortController().signal });
      expect(result!.inserted).toBe(2);
      async function* records() {
        yield { line: 1, raw: makeLot({ vin: recordVin, lot_id: 70000202 }) };
      }
      await app.services.ingest.importRecords(records(), { bulkLoad: true });
      const before = receiver.received.length;
      expect(await deliverAll()).toBe(2);
      expect(receiver.events().slice(before).map((e) => e.data.vin).sort()).toEqual([fileVin, recordVin].sort());
    });

    it('one event per lot per batch per account, whatever watches match; a lot watch sees its lot only', async () => {
      const customer = await subscriber();
      const other = await subscriber();
      const vin = validVin('WBA3A5C50CF00301');
      await api(customer.token, 'POST', '/api/v1/watches', { vin });
      await api(customer.token, 'POST', '/api/v1/watches', { auction: 'copart', lot_id: 70000301 });
      await api(other.token, 'POST', '/api/v1/watches', { auction: 'copart', lot_id: 70000301 });
      const before = receiver.received.length;
      await postLots([makeLot({ vin, lot_id: 70000301 }), makeLot({ vin, lot_id: 70000301, odometer: 5 }), makeLot({ vin, lot_id: 70000302 })]);
      expect(await deliverAll()).toBe(3);
      const events = receiver.events().slice(before);
      const byAccount = (secret: string) =>
        receiver.received.slice(before).filter((r) => verifySignature(String(r.headers['vinhistory-signature']), r.body, secret, Math.floor(clock / 1000))).map((r) => JSON.parse(r.body).data.lot.lot_id).sort();
      expect(byAccount(customer.secret)).toEqual([70000301, 70000302]);
      expect(byAccount(other.secret)).toEqual([70000301]);
      expect(events.every((e) => e.type === 'lot.created')).toBe(true);
    });

    it('makes no event for an account without a plan in force', async () => {
      const customer = await subscriber();
      const vin = validVin('1G1ZD5ST0JF00401');
      await api(customer.token, 'POST', '/api/v1/watches', { vin });
      await database.repos.subscriptions.cancelActive(customer.accountId);
      await postLots([makeLot({ vin })]);
      expect(await deliverAll()).toBe(0);
    });
  });

  describe('delivery', () => {
    it('retries a failing receiver on the backoff schedule, shows each attempt, then delivers', async () => {
      const customer = await subscriber();
      const vin = validVin('JH4KA8260MC00501');
      await api(customer.token, 'POST', '/api/v1/watches', { vin });
      receiver.status = 500;
      receiver.answer = 'down for maintenance';
      try {
        await postLots([makeLot({ vin })]);
        expect(await deliverAll()).toBe(1);
        // With the jitter fixed at the middle: 3/4 of 30 s, then 3/4 of 60 s.
        let deliveries = (await api(customer.token, 'GET', '/api/v1/webhook/deliveries')).json().data;
        expect(deliveries[0]).toMatchObject({ status: 'pending', attempts: [{ status_code: 500, error: 'answered 500', response_excerpt: 'down for maintenance' }] });
        expect(Date.parse(deliveries[0].next_attempt_at) - clock).toBe((FIRST_RETRY_MS * 3) / 4);
        clock += (FIRST_RETRY_MS * 3) / 4 - 1000;
        expect(await deliverAll()).toBe(0);
        clock += 1000;
        expect(await deliverAll()).toBe(1);
        deliveries = (await api(customer.token, 'GET', '/api/v1/webhook/deliveries')).json().data;
        expect(Date.parse(deliveries[0].next_attempt_at) - clock).toBe((2 * FIRST_RETRY_MS * 3) / 4);
        receiver.status = 200;
        clock += 2 * FIRST_RETRY_MS;
        expect(await deliverAll()).toBe(1);
        deliveries = (await api(customer.token, 'GET', '/api/v1/webhook/deliveries')).json().data;
        expect(deliveries[0].status).toBe('delivered');
        expect(deliveries[0].attempts.map((a: { status_code: number }) => a.status_code)).toEqual([500, 500, 200]);
        expect(deliveries[0].attempts.every((a: { duration_ms: number }) => a.duration_ms >= 0)).toBe(true);
        expect(app.services.database.dialect).toBe(dialect);
      } finally {
        receiver.status = 200;
        receiver.answer = 'ok';
      }
    });

    it('gives up after 72 hours, disables an endpoint failing for three days and mails its owner; resend and saving again bring it back', async () => {
      const customer = await subscriber();
      const vin = validVin('1N4AL3AP0JC00601');
      await api(customer.token, 'POST', '/api/v1/watches', { vin });
      receiver.status = 503;
      try {
        await postLots([makeLot({ vin })]);
        const start = clock;
        while (clock - start < 80 * HOUR) {
          await deliverAll();
          clock += HOUR;
        }
        const deliveries = (await api(customer.token, 'GET', '/api/v1/webhook/deliveries')).json().data;
        expect(deliveries[0].status).toBe('failed');
        expect(deliveries[0].attempts.length).toBeGreaterThan(10);
        // The event gave up at 72 hours; the endpoint's next failure, three days into the streak, disables it.
        expect((await api(customer.token, 'GET', '/api/v1/webhook')).json().enabled).toBe(true);
        await postLots([makeLot({ vin, odometer: 1 })]);
        expect(await deliverAll()).toBe(1);
        const endpoint = (await api(customer.token, 'GET', '/api/v1/webhook')).json();
        expect(endpoint.enabled).toBe(false);
        const email = (await database.repos.accounts.findById(customer.accountId))!.email;
        // Through the mail queue, like every account mail (issue 28, Also): queued, then sent by the mail worker.
        const queued = (await app.services.mail.list('queued', 100)).filter((mail) => mail.recipient === email);
        expect(queued.map((mail) => mail.kind)).toEqual(['webhook_endpoint_disabled']);
        await app.services.mailDelivery.drain();
        const mails = readdirSync(path.join(dataDir, 'outbox')).map((f) => readFileSync(path.join(dataDir, 'outbox', f), 'utf8'));
        expect(mails.filter((m) => m.includes(`To: ${email}`) && m.includes('disabled'))).toHaveLength(1);
        // Disabled: new events are not made, the ping is refused.
        expect((await api(customer.token, 'POST', '/api/v1/webhook/test')).statusCode).toBe(409);

        receiver.status = 200;
        expect((await api(customer.token, 'PUT', '/api/v1/webhook', { url: receiver.url })).json().enabled).toBe(true);
        const resend = await api(customer.token, 'POST', `/api/v1/webhook/deliveries/${deliveries[0].event_id}/resend`);
        expect(resend.statusCode).toBe(202);
        expect(await deliverAll()).toBe(1);
        expect(receiver.events().at(-1)!.id).toBe(deliveries[0].event_id);
        expect((await api(customer.token, 'POST', `/api/v1/webhook/deliveries/evt_nope/resend`)).statusCode).toBe(404);
      } finally {
        receiver.status = 200;
      }
    });

    it('signs with both secrets during a rotation grace period, then with the new one only', async () => {
      const customer = await subscriber();
      const rotated = await api(customer.token, 'PUT', '/api/v1/webhook', { url: receiver.url, rotate_secret: true });
      expect(rotated.statusCode).toBe(200);
      const fresh = rotated.json().secret as string;
      expect(fresh).not.toBe(customer.secret);
      expect(rotated.json().previous_secret_expires_at).not.toBeNull();
      await api(customer.token, 'POST', '/api/v1/webhook/test');
      let got = receiver.received.at(-1)!;
      const header = String(got.headers['vinhistory-signature']);
      expect(header.match(/v1=/g)).toHaveLength(2);
      expect(verifySignature(header, got.body, fresh, Math.floor(clock / 1000))).toBe(true);
      expect(verifySignature(header, got.body, customer.secret, Math.floor(clock / 1000))).toBe(true);
      clock += 25 * HOUR;
      await api(customer.token, 'POST', '/api/v1/webhook/test');
      got = receiver.received.at(-1)!;
      expect(String(got.headers['vinhistory-signature']).match(/v1=/g)).toHaveLength(1);
      expect(verifySignature(String(got.headers['vinhistory-signature']), got.body, customer.secret, Math.floor(clock / 1000))).toBe(false);
    });

    it('reports deliveries, queue depth and the oldest pending age in /metrics', async () => {
      const res = await app.inject({ url: '/metrics' });
      expect(res.body).toMatch(/vinhistory_webhook_deliveries_total\{outcome="delivered"\} \d+/);
      expect(res.body).toMatch(/vinhistory_webhook_queue_depth \d+/);
      expect(res.body).toMatch(/vinhistory_webhook_oldest_pending_age_seconds \d+/);
    });
  });
});
