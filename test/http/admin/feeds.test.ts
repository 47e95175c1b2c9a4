import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../support/app.ts';
import { expectDocumentedStatuses } from '../../support/documented-statuses.ts';

/** /admin/v1/feeds: the same FeedService as `vinhistory feeds`; the pulls are tested in test/feeds/. SQLite: no statement of its own differs. */
describe('the operators\' feeds over /admin/v1/feeds', () => {
  let t: TestApp;
  let token: string;

  beforeAll(async () => {
    t = await createTestApp('sqlite');
    token = (await t.repos.operatorTokens.create('feeds-desk')).token;
  });
  afterAll(async () => {
    expectDocumentedStatuses();
    await t?.close();
  });

  const call = (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: unknown, authorization: string | null = token) =>
    t.app.inject({ method, url, headers: authorization ? { authorization } : {}, ...(payload !== undefined ? { payload: payload as object } : {}) });

  it('answers 401 without an operator token, with the contract\'s exact body', async () => {
    for (const [method, url] of [['GET', '/admin/v1/feeds'], ['POST', '/admin/v1/feeds'], ['POST', '/admin/v1/feeds/x/run'], ['DELETE', '/admin/v1/feeds/x']] as const) {
      const answer = await call(method, url, method === 'POST' ? {} : undefined, null);
      expect(answer.statusCode).toBe(401);
      expect(answer.body).toBe('{"message":"Unauthenticated."}');
    }
  });

  it('adds a feed due at once, lists it with the contract\'s fields and no secret, pauses, resumes, runs and removes it', async () => {
    const added = await call('POST', '/admin/v1/feeds', {
      name: 'copart-member',
      url: 'https://member.example.com/downloads/salesdata.csv?token=abc123&yard=1',
      format: 'copart-csv',
      every: '15m',
      headers: ['Cookie: env:COPART_COOKIE', 'X-Api-Key: literal-secret-value'],
      listing: true,
    });
    expect(added.statusCode).toBe(201);
    const feed = added.json<Record<string, unknown>>();
    expect(feed).toMatchObject({
      name: 'copart-member',
      url: 'https://member.example.com/downloads/salesdata.csv?token=REDACTED&yard=1',
      format: 'copart-csv',
      every: '15m',
      paused: false,
      last_attempt_at: null,
      last_success_at: null,
      last_status: null,
      last_error: null,
      read: 0,
      inserted: 0,
      updated: 0,
      unchanged: 0,
      skipped: 0,
      listing: true,
      headers: [{ name: 'Cookie', from: 'env', env: 'COPART_COOKIE' }, { name: 'X-Api-Key', from: 'literal', env: null }],
    });
    expect(Date.parse(feed.next_run_at as string)).toBeLessThanOrEqual(Date.now());
    const listed = await call('GET', '/admin/v1/feeds');
    expect(listed.statusCode).toBe(200);
    expect(listed.body).not.toContain('literal-secret-value');
    expect(listed.body).not.toContain('abc123');
    expect(JSON.stringify(await t.db.kysely.selectFrom('feeds').selectAll().execute())).not.toContain('literal-secret-value');

    expect((await call('POST', '/admin/v1/feeds', { name: 'copart-member', url: 'https://other.example.com/a.csv' })).json()).toMatchObject({ code: 'operation_refused' });
    expect((await call('POST', '/admin/v1/feeds/copart-member/pause')).json()).toMatchObject({ paused: true });
    expect((await call('POST', '/admin/v1/feeds/copart-member/resume')).json()).toMatchObject({ paused: false });
    const run = await call('POST', '/admin/v1/feeds/copart-member/run?accept_changes=true');
    expect(run.statusCode).toBe(202);
    expect((await call('DELETE', '/admin/v1/feeds/copart-member')).statusCode).toBe(204);
    expect((await call('DELETE', '/admin/v1/feeds/copart-member')).json()).toMatchObject({ code: 'not_found' });
    expect((await call('POST', '/admin/v1/feeds/copart-member/run')).statusCode).toBe(404);

    // Each change in the operators' audit log, as other operator actions are, and no secret in it.
    const audit = await t.repos.operatorAudit.page({ limit: 10, target: 'copart-member' });
    expect(audit.map((entry) => entry.action).reverse()).toEqual(['feed.add', 'feed.pause', 'feed.resume', 'feed.run', 'feed.remove']);
    expect(audit.at(-1)!.details).toMatchObject({ url: 'https://member.example.com/downloads/salesdata.csv?token=REDACTED&yard=1', headers: ['Cookie', 'X-Api-Key'] });
    expect(JSON.stringify(audit)).not.toContain('literal-secret-value');
    expect(JSON.stringify(audit)).not.toContain('abc123');
  });

  it('refuses bad input with the field named: a private address, a schedule, a header, a format without its mapping', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ name: 'local', url: 'http://127.0.0.1:8080/feed.csv' }, 'url'],
      [{ name: 'Bad Name', url: 'https://a.example.com/f.csv' }, 'name'],
      [{ name: 'often', url: 'https://a.example.com/f.csv', every: '10s' }, 'every'],
      [{ name: 'hdr', url: 'https://a.example.com/f.csv', headers: ['no colon here'] }, 'headers'],
      [{ name: 'hdr2', url: 'https://a.example.com/f.csv', headers: ['Host: evil.example.com'] }, 'headers'],
      [{ name: 'mapped', url: 'https://a.example.com/f.csv', format: 'csv' }, 'map'],
    ];
    for (const [body, field] of cases) {
      const answer = await call('POST', '/admin/v1/feeds', body);
      expect(answer.statusCode, JSON.stringify(body)).toBe(422);
      expect(answer.json<{ errors: Record<string, string[]> }>().errors).toHaveProperty(field);
    }
  });
});
