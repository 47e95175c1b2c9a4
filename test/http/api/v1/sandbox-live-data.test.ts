import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, testConfig, type TestApp } from '../../../support/app.ts';
import { createCustomer, makeLot, validVin, type Customer } from '../../../support/fixtures.ts';
import { expectDocumentedStatuses } from '../../../support/documented-statuses.ts';

const LIVE_VIN = validVin('5YJSA1E26HF00017');

/**
 * Issue 28, F3: a sandbox token (`vh_test_`) set and rotated the account's live webhook, watched
 * live VINs and read live Lot records through the delivery log. Watches and the webhook act on live
 * data only, so a sandbox token is refused there with 403 `live_token_required`, on the production
 * configuration, before anything is read or changed.
 */
describe('sandbox tokens and the live watches and webhook (production configuration)', () => {
  let t: TestApp;
  let c: Customer & { testToken: string };

  beforeAll(async () => {
    t = await createTestApp('sqlite', { config: testConfig({ NODE_ENV: 'production', COOKIE_SECRET: 'x'.repeat(40) }) });
    await t.repos.lots.upsertBatch([makeLot({ vin: LIVE_VIN, auction: 'copart', lot_id: 77100001 })]);
    const customer = await createCustomer(t.repos);
    const { token } = await t.repos.tokens.create(customer.accountId, 'sandbox', new Date(), 'test');
    c = { ...customer, testToken: token };
  });
  afterAll(async () => t?.close());

  const send = (token: string, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object) =>
    t.app.inject({ method, url, headers: { authorization: token }, ...(payload ? { payload } : {}) });

  const expectRefused = (res: Awaited<ReturnType<typeof send>>) => {
    expect(res.statusCode, res.body).toBe(403);
    expect(res.json()).toEqual({
      code: 'live_token_required',
      message: 'A sandbox token cannot use watches or the webhook: they act on live data. Use a live token (vh_live_) of the account.',
    });
  };

  it('PUT /api/v1/webhook: refused, and no endpoint is set or rotated', async () => {
    expectRefused(await send(c.testToken, 'PUT', '/api/v1/webhook', { url: 'https://hooks.example.com/vinhistory' }));
    expectRefused(await send(c.testToken, 'PUT', '/api/v1/webhook', { url: 'https://hooks.example.com/vinhistory', rotate_secret: true }));
    const live = await send(c.token, 'GET', '/api/v1/webhook');
    expect(live.statusCode).toBe(404);
    expect(live.json().code).toBe('not_found');
  });

  it('GET /api/v1/webhook: refused', async () => {
    expectRefused(await send(c.testToken, 'GET', '/api/v1/webhook'));
  });

  it('POST /api/v1/webhook/test: refused', async () => {
    expectRefused(await send(c.testToken, 'POST', '/api/v1/webhook/test'));
  });

  it('GET /api/v1/webhook/deliveries: refused, no live event read', async () => {
    expectRefused(await send(c.testToken, 'GET', '/api/v1/webhook/deliveries'));
    expectRefused(await send(c.testToken, 'GET', '/api/v1/webhook/deliveries?limit=100'));
  });

  it('POST /api/v1/webhook/deliveries/{event_id}/resend: refused', async () => {
    expectRefused(await send(c.testToken, 'POST', '/api/v1/webhook/deliveries/evt_0000000000000000/resend'));
  });

  it('POST /api/v1/watches: refused for a live VIN and a live lot, and nothing is watched', async () => {
    expectRefused(await send(c.testToken, 'POST', '/api/v1/watches', { vin: LIVE_VIN }));
    expectRefused(await send(c.testToken, 'POST', '/api/v1/watches', { auction: 'copart', lot_id: 77100001 }));
    const live = await send(c.token, 'GET', '/api/v1/watches');
    expect(live.statusCode).toBe(200);
    expect(live.json().data).toEqual([]);
  });

  it('GET /api/v1/watches: refused, while the live token lists its watches', async () => {
    const made = await send(c.token, 'POST', '/api/v1/watches', { vin: LIVE_VIN });
    expect(made.statusCode).toBe(201);
    expectRefused(await send(c.testToken, 'GET', '/api/v1/watches'));
    expect((await send(c.token, 'GET', '/api/v1/watches')).json().data.map((watch: { id: string }) => watch.id)).toContain(made.json().id);
  });

  it('DELETE /api/v1/watches/{id}: refused, and the live watch stays', async () => {
    const made = await send(c.token, 'POST', '/api/v1/watches', { auction: 'copart', lot_id: 77100001 });
    expect(made.statusCode).toBe(201);
    expectRefused(await send(c.testToken, 'DELETE', `/api/v1/watches/${made.json().id}`));
    expect((await send(c.token, 'GET', '/api/v1/watches')).json().data.map((watch: { id: string }) => watch.id)).toContain(made.json().id);
  });

  it('still answers 401 before the 403: an unknown token is unauthenticated', async () => {
    const res = await send('vh_test_' + '0'.repeat(32), 'GET', '/api/v1/watches');
    expect(res.statusCode).toBe(401);
    expect(res.body).toBe('{"message":"Unauthenticated."}');
  });

  it('documents every status it answered', () => expectDocumentedStatuses());
});
