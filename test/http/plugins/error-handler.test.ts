import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../support/app.ts';

describe('wrong methods and unknown paths', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp('sqlite');
  });
  afterAll(async () => t?.close());

  it('answers a wrong method on an admin path with a JSON 405 and Allow, as under /api/', async () => {
    for (const method of ['GET', 'PUT', 'PATCH', 'DELETE'] as const) {
      const res = await t.app.inject({ method, url: '/admin/v1/lots' });
      expect(res.statusCode, method).toBe(405);
      expect(res.headers.allow).toBe('POST');
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.json()).toEqual({ code: 'method_not_allowed', message: expect.stringMatching(/not allowed/) });
    }
  });

  it('answers an unknown admin path with a JSON 404', async () => {
    // `/admin` itself is the operators' page (docs/operators.md).
    for (const url of ['/admin/v1/nothing', '/admin/v2/lots', '/admin/']) {
      const res = await t.app.inject({ url });
      expect(res.statusCode, url).toBe(404);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.json()).toEqual({ code: 'route_not_found', message: expect.stringContaining('/admin/v1/openapi.json') });
    }
  });

  it('answers QUERY with 405 and Allow on a known path and 404 on an unknown one, body or not', async () => {
    for (const headers of [{}, { 'content-type': 'application/json' }]) {
      const search = await t.app.inject({ method: 'QUERY' as 'GET', url: '/api/v1/search', headers, ...(Object.keys(headers).length ? { payload: '{}' } : {}) });
      expect(search.statusCode).toBe(405);
      expect(search.headers.allow).toBe('GET, POST');
      const admin = await t.app.inject({ method: 'QUERY' as 'GET', url: '/admin/v1/lots', headers });
      expect(admin.statusCode).toBe(405);
      expect(admin.headers.allow).toBe('POST');
      const page = await t.app.inject({ method: 'QUERY' as 'GET', url: '/pricing', headers });
      expect(page.statusCode).toBe(405);
      expect(page.headers.allow).toBe('GET');
      for (const url of ['/api/v1/nothing', '/admin/v1/nothing', '/nothing']) {
        const res = await t.app.inject({ method: 'QUERY' as 'GET', url, headers });
        expect(res.statusCode, url).toBe(404);
      }
    }
  });

  it('gives every error body of the API a code beside its message, and the 401 exactly its contract body', async () => {
    const unauthenticated = await t.app.inject({ url: '/api/v1/watches' });
    expect(unauthenticated.statusCode).toBe(401);
    expect(unauthenticated.body).toBe('{"message":"Unauthenticated."}');
    const adminUnauthenticated = await t.app.inject({ method: 'POST', url: '/admin/v1/lots', headers: { authorization: 'vh_op_nothing' } });
    expect(adminUnauthenticated.statusCode).toBe(401);
    expect(adminUnauthenticated.body).toBe('{"message":"Unauthenticated."}');
    const unknown = await t.app.inject({ url: '/api/v1/nothing' });
    expect(unknown.json()).toEqual({ code: 'route_not_found', message: 'No API endpoint at GET /api/v1/nothing. The API reference is at /docs.' });
    const wrongMethod = await t.app.inject({ method: 'DELETE', url: '/api/v1/search' });
    expect(wrongMethod.statusCode).toBe(405);
    expect(wrongMethod.json()).toEqual({ code: 'method_not_allowed', message: 'Method DELETE is not allowed on /api/v1/search; use GET or POST.' });
  });

  it('keeps the HTML not-found page for the website', async () => {
    const res = await t.app.inject({ url: '/nothing' });
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
  });
});
