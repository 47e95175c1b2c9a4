import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../support/app.ts';

describe('API documentation and health', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp('sqlite');
  });
  afterAll(async () => t?.close());

  it('serves OpenAPI 3.1 generated from the route schemas, every status of the contract documented', async () => {
    const res = await t.app.inject({ url: '/api/v1/openapi.json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.servers[0].url).toBe('https://vinhistory.test');
    for (const method of ['get', 'post']) {
      const operation = doc.paths['/api/v1/search'][method];
      expect(Object.keys(operation.responses).sort()).toEqual(['200', '401', '402', '404', '413', '422', '429', '5XX'].sort());
      expect(operation.security).toEqual([{ apiToken: [] }]);
      for (const status of ['200', '404', '429']) {
        expect(Object.keys(operation.responses[status].headers)).toEqual(
          expect.arrayContaining(['RateLimit-Policy', 'RateLimit', 'X-RateLimit-Limit', 'X-RateLimit-Remaining']),
        );
      }
      expect(operation.responses['429'].headers['Retry-After']).toBeDefined();
    }
    expect(doc.paths['/api/v1/search'].post.requestBody.content['application/json'].schema).toBeDefined();
    expect(doc.paths['/api/v1/search'].get.parameters.map((p: { name: string }) => p.name)).toEqual(expect.arrayContaining(['vin', 'idempotency-key']));
    expect(doc.components.schemas.Lot.required).toContain('secondary_damage');
    expect(doc.paths['/healthz']).toBeUndefined();
  });

  it('serves a readable reference page at /docs from the npm package (no CDN)', async () => {
    const res = await t.app.inject({ url: '/docs/' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/text\/html/);
    expect(res.body).not.toMatch(/https?:\/\/(cdn|unpkg|cdnjs|jsdelivr)/);
    const bundle = await t.app.inject({ url: '/docs/static/swagger-ui-bundle.js' });
    expect(bundle.statusCode).toBe(200);
  });

  it('serves the landing page at the root, linking the API reference', async () => {
    const res = await t.app.inject({ url: '/' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).toContain('href="/docs"');
  });

  it('answers /healthz with 200 while the database answers', async () => {
    const res = await t.app.inject({ url: '/healthz' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok' });
  });
});
