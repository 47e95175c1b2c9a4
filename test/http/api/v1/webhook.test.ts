import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../../../src/app.ts';
import { MemoryRateLimiter } from '../../../../src/limits/rate/memory-rate-limiter.ts';
import { EVENT_RETENTION_MS } from '../../../../src/webhooks/delivery-worker.ts';
import { DELIVERY_WINDOW_MS } from '../../../../src/webhooks/retry-schedule.ts';
import { verifySignature } from '../../../../src/webhooks/signing.ts';
import { buildAppOn, testConfig } from '../../../support/app.ts';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../../../support/databases.ts';
import { createCustomer, type Customer } from '../../../support/fixtures.ts';
import { expectDocumentedStatuses } from '../../../support/documented-statuses.ts';
import { Receiver } from '../../../webhooks/receiver.ts';

describe.each(DIALECTS)('the webhook endpoint (/api/v1/webhook) on %s', (dialect) => {
  let database: TestDatabase;
  let app: App;
  let receiver: Receiver;
  let dataDir: string;
  // The clock the services read: signatures are checked against it, and deliveries are stamped apart.
  let clock = 0;
  const now = () => new Date(clock);

  beforeAll(async () => {
    database = await createTestDatabase(dialect);
    dataDir = mkdtempSync(path.join(tmpdir(), 'vinhistory-webhook-'));
    app = await buildAppOn({
      config: testConfig({ OUTBOUND_ALLOW_PRIVATE: 'true', DATA_DIR: dataDir }),
      db: database.db,
      rateLimiter: new MemoryRateLimiter(),
      now,
      overrides: { random: () => 0.5 },
    });
    await app.ready();
    receiver = await new Receiver().start();
    // Ahead of the real time the subscriptions are stamped with, so that they are in force.
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

  /** A customer with an endpoint on the receiver; returns its secret. */
  async function subscriber(options: { plan?: string } = {}): Promise<Customer & { secret: string }> {
    const customer = await createCustomer(database.repos, options);
    const res = await api(customer.token, 'PUT', '/api/v1/webhook', { url: receiver.url });
    expect(res.statusCode).toBe(201);
    return { ...customer, secret: res.json().secret };
  }

  describe('the endpoint', () => {
    it('shows the secret once; refuses URLs outside the outbound rules', async () => {
      const customer = await createCustomer(database.repos);
      const set = await api(customer.token, 'PUT', '/api/v1/webhook', { url: receiver.url });
      expect(set.statusCode).toBe(201);
      expect(set.json().secret).toMatch(/^whsec_[A-Za-z0-9_-]{32}$/);
      const shown = await api(customer.token, 'GET', '/api/v1/webhook');
      expect(shown.statusCode).toBe(200);
      expect(JSON.stringify(shown.json())).not.toContain(set.json().secret);
      expect(shown.json().secret_hint).toBe(`${set.json().secret.slice(0, 10)}…`);
      const again = await api(customer.token, 'PUT', '/api/v1/webhook', { url: receiver.url });
      expect(again.statusCode).toBe(200);
      expect(again.json().secret).toBeNull();
      for (const url of ['ftp://example.com/x', 'https://user:pw@example.com/hook', 'not a url']) {
        const res = await api(customer.token, 'PUT', '/api/v1/webhook', { url });
        expect(res.statusCode, url).toBe(422);
        expect(res.json().errors.url).toBeDefined();
      }
      // The stored secret is sealed, not in plain text.
      const row = await database.db.kysely.selectFrom('webhook_endpoints').selectAll().where('account_id', '=', customer.accountId).executeTakeFirstOrThrow();
      expect(row.secret_box).not.toContain(set.json().secret);
      expect(row.secret_box).toMatch(/^v1\./);
    });

    it('sends a signed ping with POST /api/v1/webhook/test; 404 without an endpoint', async () => {
      const customer = await subscriber();
      const res = await api(customer.token, 'POST', '/api/v1/webhook/test');
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ type: 'ping', status: 'delivered', attempts: [{ status_code: 200, response_excerpt: 'ok' }] });
      const got = receiver.received.at(-1)!;
      expect(got.headers['vinhistory-event-id']).toBe(res.json().event_id);
      expect(got.headers['content-type']).toBe('application/json');
      expect(verifySignature(String(got.headers['vinhistory-signature']), got.body, customer.secret, Math.floor(clock / 1000))).toBe(true);
      const lonely = await createCustomer(database.repos);
      expect((await api(lonely.token, 'POST', '/api/v1/webhook/test')).statusCode).toBe(404);
    });
  });

  describe('deliveries', () => {
    it('pages deliveries with a cursor; another account sees none of them', async () => {
      const customer = await subscriber();
      for (let i = 0; i < 3; i++) {
        clock += 1;
        await api(customer.token, 'POST', '/api/v1/webhook/test');
      }
      const first = (await api(customer.token, 'GET', '/api/v1/webhook/deliveries?limit=2')).json();
      expect(first.data).toHaveLength(2);
      const second = (await api(customer.token, 'GET', `/api/v1/webhook/deliveries?limit=2&cursor=${first.next_cursor}`)).json();
      expect(second.data).toHaveLength(1);
      expect(second.next_cursor).toBeNull();
      const other = await createCustomer(database.repos);
      expect((await api(other.token, 'GET', '/api/v1/webhook/deliveries')).json().data).toEqual([]);
      expect((await api(other.token, 'POST', `/api/v1/webhook/deliveries/${first.data[0].event_id}/resend`)).statusCode).toBe(404);
    });
  });
});

const DAY = 24 * 60 * 60 * 1000;

/** Issue 28, F5: test pings were unthrottled, and nothing deleted old outbox rows. Production configuration. */
describe.each(DIALECTS)('webhook pings and the outbox retention on %s', (dialect) => {
  let database: TestDatabase;
  let app: App;
  let receiver: Receiver;
  let dataDir: string;
  let clock = Date.now();
  const now = () => new Date(clock);

  beforeAll(async () => {
    database = await createTestDatabase(dialect);
    dataDir = mkdtempSync(path.join(tmpdir(), 'vinhistory-webhook-route-'));
    app = await buildAppOn({
      // The receiver is on loopback: the one outbound rule lifted.
      config: testConfig({ NODE_ENV: 'production', OUTBOUND_ALLOW_PRIVATE: 'true', DATA_DIR: dataDir }),
      db: database.db,
      rateLimiter: new MemoryRateLimiter(),
      now,
      overrides: { webhookWorker: { pollMs: 20 } },
    });
    await app.ready();
    receiver = await new Receiver().start();
  });
  afterAll(async () => {
    await app?.close();
    await receiver?.stop();
    await database?.destroy();
    rmSync(dataDir, { recursive: true, force: true });
    expectDocumentedStatuses();
  });

  const api = (token: string, method: 'POST' | 'PUT', url: string, payload?: object) =>
    app.inject({ method, url, headers: { authorization: token }, ...(payload ? { payload } : {}) });

  it('throttles pings per account, even without a plan: 30 at once send 5, the rest 429 with Retry-After', async () => {
    // An account with no plan at all: its token is enough to set an endpoint and ping it.
    const account = await database.repos.accounts.create(`no-plan-${Math.random().toString(36).slice(2)}@example.com`);
    const customer = { accountId: account.id, token: (await database.repos.tokens.create(account.id, 'test')).token };
    expect((await api(customer.token, 'PUT', '/api/v1/webhook', { url: receiver.url })).statusCode).toBe(201);
    const before = receiver.received.length;
    const answers = await Promise.all(Array.from({ length: 30 }, () => api(customer.token, 'POST', '/api/v1/webhook/test')));
    const statuses = answers.map((res) => res.statusCode);
    expect(statuses.filter((status) => status === 200)).toHaveLength(5);
    expect(statuses.filter((status) => status === 429)).toHaveLength(25);
    const refused = answers.find((res) => res.statusCode === 429)!;
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(refused.json().message).toMatch(/pings/i);
    expect(receiver.received.length - before).toBe(5);

    // Another account is not held back by this one; a minute on, the account may ping again.
    const other = await createCustomer(database.repos);
    expect((await api(other.token, 'PUT', '/api/v1/webhook', { url: receiver.url })).statusCode).toBe(201);
    expect((await api(other.token, 'POST', '/api/v1/webhook/test')).statusCode).toBe(200);
    clock += 61_000;
    expect((await api(customer.token, 'POST', '/api/v1/webhook/test')).statusCode).toBe(200);
  });

  it('the delivery worker deletes delivered and failed events past the retention, with their attempts, in batches; pending ones stay', async () => {
    const customer = await createCustomer(database.repos);
    expect((await api(customer.token, 'PUT', '/api/v1/webhook', { url: receiver.url })).statusCode).toBe(201);
    const outbox = database.repos.webhookOutbox;
    // 503 old delivered events (more than one batch), one old pending and one recent delivered.
    const old = new Date(clock - EVENT_RETENTION_MS - DAY);
    const event = (id: string) => ({ id, accountId: customer.accountId, type: 'ping' as const, payload: '{}', at: old.toISOString(), giveUpAt: new Date(old.getTime() + DELIVERY_WINDOW_MS).toISOString() });
    for (let from = 0; from < 503; from += 100) {
      await outbox.insertEvents(Array.from({ length: Math.min(100, 503 - from) }, (_, i) => event(`evt_old${from + i}`)));
    }
    await outbox.insertEvents([event('evt_oldpending')]);
    const claimed = await outbox.claim({ owner: 'test', now: old, leaseMs: 60_000, limit: 2000 });
    for (const event of claimed.filter((e) => e.id !== 'evt_oldpending')) {
      await outbox.recordAttempt(event.id, 'test', { attemptedAt: old.toISOString(), url: receiver.url, statusCode: 200, durationMs: 5, error: null, responseExcerpt: 'ok' }, { kind: 'delivered' });
    }
    expect((await api(customer.token, 'POST', '/api/v1/webhook/test')).statusCode).toBe(200);
    const count = async () => (await outbox.listDeliveries(customer.accountId, { limit: 5000 })).items.length;
    expect(await count()).toBe(505);

    // evt_oldpending was claimed by 'test' long ago: its lease has ended and the worker sends it.
    app.services.deliveryWorker.start();
    const deadline = Date.now() + 20_000;
    while ((await count()) > 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    await app.services.deliveryWorker.stop();
    const left = (await outbox.listDeliveries(customer.accountId, { limit: 5000 })).items;
    expect(left.map((d) => d.eventId)).toContain('evt_oldpending');
    expect(left).toHaveLength(2);
  });
});
