import { describe, expect, it } from 'vitest';
import {
  InternalServerError,
  RateLimitError,
  ServiceUnavailableError,
  Vinhistory,
  VinhistoryTimeoutError,
  retryAfterSeconds,
  type ClientOptions,
} from '../../sdks/typescript/src/index.ts';

/**
 * The TypeScript SDK's hand-written transport on a fetch that answers what each case needs (no
 * server, no socket): the bounded retry of 429 and 503 and when it holds back, Retry-After in
 * both forms, the answer read by its own Content-Type, timeouts. The live server's answers are
 * test/sdks/live-server.test.ts.
 */
interface Sent {
  url: string;
  method: string;
  headers: Headers;
  body: string | null;
}

function clientAnswering(answers: (() => Response)[], options: Partial<ClientOptions> = {}) {
  const sent: Sent[] = [];
  const waits: number[] = [];
  const client = new Vinhistory({
    token: 'vh_live_x',
    baseUrl: 'https://api.example.com/',
    fetch: async (url, init) => {
      sent.push({ url: url instanceof Request ? url.url : url.toString(), method: init?.method ?? 'GET', headers: new Headers(init?.headers), body: typeof init?.body === 'string' ? init.body : null });
      const next = answers[Math.min(sent.length - 1, answers.length - 1)]!;
      return next();
    },
    sleep: async (ms) => {
      waits.push(ms);
    },
    ...options,
  });
  return { client, sent, waits };
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) => () =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });
const busy = json(503, { code: 'service_busy', message: 'busy' }, { 'retry-after': '2' });
const usage = json(200, { used: 1 });

describe('the TypeScript SDK transport', () => {
  it('retries a free call on 503 after Retry-After, at most maxRetries times', async () => {
    const { client, sent, waits } = clientAnswering([busy, busy, usage]);
    expect(await client.usage()).toEqual({ used: 1 });
    expect(waits).toEqual([2000, 2000]);
    expect(sent.map((request) => request.url)).toEqual(Array(3).fill('https://api.example.com/api/v1/usage'));
    expect(sent[0]!.headers.get('authorization')).toBe('vh_live_x');

    const always = clientAnswering([busy], { maxRetries: 1 });
    await expect(always.client.usage()).rejects.toBeInstanceOf(ServiceUnavailableError);
    expect(always.sent).toHaveLength(2);
  });

  it('does not retry a counted call without an Idempotency-Key, unless told to', async () => {
    const unkeyed = clientAnswering([busy, json(200, { vin: 'V' })]);
    await expect(unkeyed.client.searchPost({ vin: 'V' })).rejects.toMatchObject({ status: 503, code: 'service_busy', retryAfter: 2 });
    expect(unkeyed.sent).toHaveLength(1);

    const keyed = clientAnswering([busy, json(200, { vin: 'V' })]);
    expect(await keyed.client.searchPost({ vin: 'V' }, { idempotencyKey: 'k-1' })).toEqual({ vin: 'V' });
    expect(keyed.sent.map((request) => request.headers.get('idempotency-key'))).toEqual(['k-1', 'k-1']);
    expect(keyed.sent[1]!.body).toBe('{"vin":"V"}');

    const forced = clientAnswering([busy, json(200, { vin: 'V' })]);
    expect(await forced.client.searchGet({ vin: 'V' }, { retry: true })).toEqual({ vin: 'V' });
    const off = clientAnswering([busy, usage]);
    await expect(off.client.usage({ retry: false })).rejects.toBeInstanceOf(ServiceUnavailableError);
  });

  it('throws at once when Retry-After is beyond the longest wait, and never retries other statuses', async () => {
    const quota = clientAnswering([json(429, { code: 'quota_exceeded', message: 'used up' }, { 'retry-after': '86400' }), usage]);
    await expect(quota.client.usage()).rejects.toBeInstanceOf(RateLimitError);
    expect(quota.sent).toHaveLength(1);
    const fault = clientAnswering([() => new Response('<html>bad gateway</html>', { status: 502 }), usage]);
    const error = await fault.client.usage().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InternalServerError);
    expect(error).toMatchObject({ status: 502, code: null, body: '<html>bad gateway</html>' });
    expect(fault.sent).toHaveLength(1);
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    expect(retryAfterSeconds('7')).toBe(7);
    expect(retryAfterSeconds(new Date(Date.UTC(2026, 0, 1, 0, 0, 30)).toUTCString(), Date.UTC(2026, 0, 1))).toBe(30);
    expect(retryAfterSeconds('soon')).toBeNull();
    expect(retryAfterSeconds(null)).toBeNull();
  });

  it('encodes path parameters, leaves out absent query values, and reads the answer by its Content-Type', async () => {
    const { client, sent } = clientAnswering([() => new Response('vin,lot\n', { status: 200, headers: { 'content-type': 'text/csv' } }), () => new Response(null, { status: 204 })]);
    expect(await client.listWatches({ limit: 5, cursor: undefined })).toBe('vin,lot\n');
    await client.deleteWatch({ id: 'wch_a/b' });
    expect(sent.map((request) => `${request.method} ${request.url}`)).toEqual(['GET https://api.example.com/api/v1/watches?limit=5', 'DELETE https://api.example.com/api/v1/watches/wch_a%2Fb']);
    await expect(client.deleteWatch({ id: '' })).rejects.toThrow(/path parameter id is required/);
  });

  it('gives up on an answer that does not come within the timeout', async () => {
    const client = new Vinhistory({
      token: 'vh_live_x',
      baseUrl: 'https://api.example.com',
      timeoutMs: 20,
      fetch: (_url, init) => new Promise((_resolve, reject) => init?.signal?.addEventListener('abort', () => reject(new Error('aborted')))),
    });
    await expect(client.usage()).rejects.toBeInstanceOf(VinhistoryTimeoutError);
  });
});
