import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../../../src/app.ts';
import { MemoryRateLimiter } from '../../../../src/limits/rate/memory-rate-limiter.ts';
import { EVENT_RETENTION_MS } from '../../../../src/webhooks/delivery-worker.ts';
import { buildAppOn, testConfig } from '../../../support/app.ts';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../../../support/databases.ts';
import { createCustomer } from '../../../support/fixtures.ts';
import { expectDocumentedStatuses } from '../../../support/documented-statuses.ts';
import { Receiver } from '../../../webhooks/receiver.ts';

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
    for (let i = 0; i < 503; i++) {
      await outbox.enqueue({ id: `evt_old${i}`, accountId: customer.accountId, type: 'ping', payload: '{}' }, old);
    }
    await outbox.enqueue({ id: 'evt_oldpending', accountId: customer.accountId, type: 'ping', payload: '{}' }, old);
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
