import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkOutboundName, outboundPolicy } from '../../src/outbound/outbound-policy.ts';
import { createTestApp, testConfig, type TestApp } from '../support/app.ts';
import { createCustomer } from '../support/fixtures.ts';

const production = outboundPolicy({ allowPrivate: false, isProduction: true });

describe('checkOutboundName: the name of a URL being set', () => {
  it('refuses a name resolving to a private or loopback address, with the address as the reason', async () => {
    const to = (addresses: string[]) => async () => addresses;
    expect(await checkOutboundName(new URL('https://hooks.example.com/x'), production, to(['93.184.215.14', '10.0.0.5']))).toEqual({
      ok: false,
      reason: 'hooks.example.com resolves to 10.0.0.5, which is not a public address',
    });
    expect((await checkOutboundName(new URL('https://hooks.example.com/x'), production, to(['::1']))).ok).toBe(false);
    expect((await checkOutboundName(new URL('https://hooks.example.com/x'), production, to(['93.184.215.14']))).ok).toBe(true);
  });

  it('lets through a name that does not resolve, and everything under OUTBOUND_ALLOW_PRIVATE', async () => {
    const fails = async () => Promise.reject(new Error('ENOTFOUND'));
    expect((await checkOutboundName(new URL('https://nowhere.invalid/x'), production, fails)).ok).toBe(true);
    const open = outboundPolicy({ allowPrivate: true, isProduction: true });
    expect((await checkOutboundName(new URL('https://localhost/x'), open, async () => ['127.0.0.1'])).ok).toBe(true);
  });
});

describe('PUT /api/v1/webhook in production', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp('sqlite', { config: testConfig({ NODE_ENV: 'production', MAIL_TRANSPORT: 'outbox' }) });
  });
  afterAll(async () => {
    await t.close();
  });

  it('refuses https://localhost with the reason, where every delivery would fail, and stores nothing', async () => {
    const customer = await createCustomer(t.repos);
    const res = await t.app.inject({
      method: 'PUT',
      url: '/api/v1/webhook',
      headers: { authorization: customer.token, 'content-type': 'application/json' },
      payload: { url: 'https://localhost/hooks' },
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().errors.url).toEqual([expect.stringMatching(/^The url is not accepted: localhost resolves to (127\.0\.0\.1|::1), which is not a public address\.$/)]);
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/webhook', headers: { authorization: customer.token } })).statusCode).toBe(404);
  });
});
