import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { MemoryRateLimiter } from '../../src/limits/rate/memory-rate-limiter.ts';
import type { App } from '../../src/app.ts';
import { buildAppOn, testConfig } from '../support/app.ts';
import { memoryLog } from '../support/memory-log.ts';
import { lazyRequestLogger } from '../../src/observability/logger.ts';
import { createTestDatabase, type TestDatabase } from '../support/databases.ts';

/** A secret of the shape of a real one: 32 base62 characters after the prefix. */
function secret(prefix: string): string {
  return `${prefix}${Math.random().toString(36).slice(2, 12)}${'Ab3'.repeat(8)}`.slice(0, prefix.length + 32);
}

describe('the request log', () => {
  let database: TestDatabase;
  let app: App;
  let log: ReturnType<typeof memoryLog>;
  beforeAll(async () => {
    database = await createTestDatabase('sqlite');
    log = memoryLog('trace');
    app = await buildAppOn({
      config: testConfig({ LOG_LEVEL: 'trace' }),
      db: database.db,
      rateLimiter: new MemoryRateLimiter(),
      loggerInstance: log.logger,
    });
    await app.ready();
  });
  beforeEach(() => {
    log.lines.length = 0;
  });
  afterAll(async () => {
    await app?.close();
    await database?.destroy();
  });

  test('API, sandbox and operator tokens anywhere in a URL are refused and never written to the log', async () => {
    const live = secret('vh_live_');
    const test = secret('vh_test_');
    const op = secret('vh_op_');
    const urls = [
      `/api/v1/search?vin=1HGCM82633A004352&token=${live}`,
      `/api/v1/search?token=${live}&vin=1HGCM82633A004352`,
      `/api/v1/search?access_token=${live}`,
      `/api/v1/search?authorization=Bearer%20${live}`,
      `/api/v1/search?Authorization=${live}`,
      `/api/v1/search?q=${live}`,
      `/api/v1/search?${live}`,
      `/api/v1/search?x=a;token=${live}`,
      `/api/v1/search?q=vh%5Flive%5F${live.slice(8)}`,
      `/api/v1/search?q=vh%255Flive%255F${live.slice(8)}`,
      `/api/v1/usage/${live}`,
      `/${live}`,
      `/api/v1/${encodeURIComponent(`Bearer ${live}`)}/x`,
      `/admin/v1/lots?token=${op}`,
      `/admin/v1/lots/${op}?a=1`,
      `/account?key=${op}`,
      `http://user:${live}@vinhistory.test/api/v1/search`,
      `/api/v1/search?q=${test}`,
      `/api/v1/lots/copart/${test}`,
      `/api/v1/search?q=vh%5Ftest%5F${test.slice(8)}`,
    ];
    for (const url of urls) {
      const res = await app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBeGreaterThanOrEqual(300);
    }
    const post = await app.inject({ method: 'POST', url: `/api/v1/search?token=${live}`, payload: { vin: '1HGCM82633A004352' } });
    expect(post.statusCode).toBe(401);
    const text = log.lines.join('\n');
    expect(text).toContain('incoming request');
    expect(text).toContain('[REDACTED]');
    for (const value of [live, test, op, live.slice(8), test.slice(8), op.slice(6)]) expect(text).not.toContain(value);
    // What is left still says which endpoint was asked for.
    expect(text).toContain('/api/v1/search?vin=1HGCM82633A004352&token=[REDACTED]');
  });

  test('a reset link\'s token is never logged, also on an altered reset path or with more in the query', async () => {
    const token = 'R3setT0kenSecret' + Math.random().toString(36).slice(2);
    const urls = [
      `/reset-password?token=${token}`,
      `/reset-password/?token=${token}`,
      `/RESET-PASSWORD?token=${token}`,
      `/Reset-Password/?utm=mail&token=${token}`,
      `/reset-password?utm=mail&TOKEN=${token}&x=1`,
      `/reset-password?t%6Fken=${token}`,
      `/reset-password/token=${token}`,
      `/reset-password#?token=${token}`,
      `/reset-password//x?token=${token}`,
      `/./reset-password?token=${token}`,
      `/reset-password;a?token=${token}`,
      `/reset-password%2F?token=${token}`,
    ];
    for (const url of urls) await app.inject({ method: 'GET', url });
    await app.inject({ method: 'POST', url: `/reset-password/?token=${token}`, payload: 'a=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    const text = log.lines.join('\n');
    expect(text).not.toContain(token);
  });

  test('Authorization, Cookie and Set-Cookie never reach a log line, whoever logs them', async () => {
    const live = secret('vh_live_');
    const session = 'SessionIdSecret' + Math.random().toString(36).slice(2);
    await app.inject({ method: 'GET', url: '/api/v1/usage', headers: { authorization: `Bearer ${live}`, cookie: `vh_session=${session}` } });
    // Code that logs headers itself (while debugging, say) is redacted too.
    const request = { method: 'GET', url: '/x', headers: { authorization: live, cookie: `vh_session=${session}`, 'x-api-key': live } };
    const reply = { statusCode: 200, headers: { 'set-cookie': [`vh_session=${session}; HttpOnly`] } };
    log.logger.info({ headers: request.headers }, 'debugging');
    log.logger.info({ req: request, res: reply }, 'debugging');
    log.logger.info({ request: { headers: request.headers }, response: { headers: reply.headers } }, 'debugging');
    log.logger.info({ responseHeaders: reply.headers }, 'debugging');
    log.logger.info({ cookie: request.headers.cookie, authorization: live }, 'debugging');
    log.logger.info(`token ${live} in a message`);
    const text = log.lines.join('\n');
    expect(text).toContain('debugging');
    expect(text).not.toContain(live);
    expect(text).not.toContain(session);
  });

  test('X-Request-Id is echoed only when it is a short visible-ASCII id; otherwise one is generated', async () => {
    for (const id of ['req-1', 'abc.DEF:ghi_jkl-0', 'a'.repeat(64), '7b0c9f0e-3c1a-4f4e-9a53-0a4c2b1f0e11']) {
      const res = await app.inject({ method: 'GET', url: '/pricing', headers: { 'x-request-id': id } });
      expect(res.headers['x-request-id']).toBe(id);
    }
    const generated = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
    const refused = ['', 'a'.repeat(65), 'has space', '<script>alert(1)</script>', 'tab\there', 'quote"d', 'a/b', 'x\u00e9', `id ${secret('vh_live_')}`];
    for (const id of refused) {
      const res = await app.inject({ method: 'GET', url: '/pricing', headers: { 'x-request-id': id } });
      expect(res.headers['x-request-id'], JSON.stringify(id)).toMatch(generated);
    }
    const text = log.lines.join('\n');
    for (const id of refused.filter(Boolean)) expect(text).not.toContain(`"reqId":${JSON.stringify(id)}`);
    expect(text).toContain('"reqId":"abc.DEF:ghi_jkl-0"');
    // Without the header, an id is generated as before.
    const bare = await app.inject({ method: 'GET', url: '/pricing' });
    expect(bare.headers['x-request-id']).toMatch(generated);
  });
});

describe('lazyRequestLogger', () => {
  test('writes through a child bound to the request, made only when a line at an enabled level is written', () => {
    const log = memoryLog('warn');
    let children = 0;
    const child = log.logger.child.bind(log.logger);
    log.logger.child = ((...args: Parameters<typeof child>) => {
      children++;
      return child(...args);
    }) as typeof log.logger.child;
    const request = lazyRequestLogger(log.logger, { reqId: 'req-1' }, {});
    request.info('not written');
    request.debug('not written');
    expect(children).toBe(0);
    expect(request.level).toBe('warn');
    expect(request.isLevelEnabled('info')).toBe(false);
    request.warn({ detail: 1 }, 'written');
    request.error('written too');
    expect(children).toBe(1);
    const lines = log.lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines).toMatchObject([
      { reqId: 'req-1', detail: 1, msg: 'written', level: 40 },
      { reqId: 'req-1', msg: 'written too', level: 50 },
    ]);
  });

  test("a route's own level decides (logLevel: 'error' silences its warnings; 'debug' lets debug through)", () => {
    const log = memoryLog('info');
    lazyRequestLogger(log.logger, { reqId: 'a' }, { level: 'error' }).warn('quiet route');
    lazyRequestLogger(log.logger, { reqId: 'b' }, { level: 'debug' }).debug('chatty route');
    expect(log.lines.map((line) => JSON.parse(line).msg)).toEqual(['chatty route']);
  });
});
