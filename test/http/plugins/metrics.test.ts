import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, testConfig, type TestApp } from '../../support/app.ts';
import { createCustomer, makeLot, validVin } from '../../support/fixtures.ts';

describe('/metrics', () => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it('exposes request counts, latency, limiter decisions and quota rejections in Prometheus format', async () => {
    t = await createTestApp('sqlite');
    const vin = validVin('1N4AL3AP8JC12345');
    await t.repos.lots.upsertBatch([makeLot({ vin })]);
    const customer = await createCustomer(t.repos, { quota: 1, rate: 100 });
    for (let i = 0; i < 2; i++) {
      await t.app.inject({ method: 'POST', url: '/api/v1/search', headers: { authorization: customer.token }, payload: { vin } });
    }
    const res = await t.app.inject({ url: '/metrics', remoteAddress: '127.0.0.1' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.body).toMatch(/vinhistory_http_requests_total\{route="\/api\/v1\/search",method="POST",status="200"\} 1/);
    expect(res.body).toMatch(/vinhistory_http_requests_total\{route="\/api\/v1\/search",method="POST",status="429"\} 1/);
    expect(res.body).toMatch(/vinhistory_http_request_duration_seconds_bucket\{le="0.005",route="\/api\/v1\/search"/);
    expect(res.body).toMatch(/vinhistory_quota_rejections_total 1/);
    expect(res.body).toMatch(/vinhistory_searches_total\{outcome="found"\} 1/);
  });

  it('is not reachable by customers: not through a proxy, not from another address', async () => {
    t = await createTestApp('sqlite');
    expect((await t.app.inject({ url: '/metrics', remoteAddress: '203.0.113.7' })).statusCode).toBe(404);
    expect((await t.app.inject({ url: '/metrics', remoteAddress: '127.0.0.1', headers: { 'x-forwarded-for': '203.0.113.7' } })).statusCode).toBe(404);
  });

  it('with METRICS_TOKEN, answers only the scraper that sends it', async () => {
    t = await createTestApp('sqlite', { config: testConfig({ METRICS_TOKEN: 'scrape-secret-0123456789' }) });
    expect((await t.app.inject({ url: '/metrics', remoteAddress: '127.0.0.1' })).statusCode).toBe(404);
    expect((await t.app.inject({ url: '/metrics', headers: { authorization: 'Bearer wrong-secret-0123456789' } })).statusCode).toBe(404);
    const ok = await t.app.inject({ url: '/metrics', remoteAddress: '198.51.100.1', headers: { authorization: 'Bearer scrape-secret-0123456789' } });
    expect(ok.statusCode).toBe(200);
  });
});
