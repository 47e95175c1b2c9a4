import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../../../src/app.ts';
import { MemoryRateLimiter } from '../../../../src/limits/rate/memory-rate-limiter.ts';
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
