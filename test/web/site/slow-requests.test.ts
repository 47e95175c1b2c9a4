import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { App } from '../../../src/app.ts';
import { MemoryRateLimiter } from '../../../src/limits/rate/memory-rate-limiter.ts';
import { buildAppOn, testConfig } from '../../support/app.ts';
import { createTestDatabase, type TestDatabase } from '../../support/databases.ts';

const TIMEOUT_MS = 500;
/** The timeout, the server's check of it, and a slow machine's delay: far below the 200 s seen before. */
const CLOSED_WITHIN_MS = 3_000;

interface Outcome {
  answer: string;
  closed: boolean;
  afterMs: number;
}

/**
 * Sends `request` over a raw socket and then nothing more, as a slow or hostile client would;
 * resolves when the server closes the connection, or after twice the bound if it does not.
 */
async function sendAndStall(port: number, request: string): Promise<Outcome> {
  const socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  const started = Date.now();
  let answer = '';
  socket.on('data', (chunk: Buffer) => {
    answer += chunk.toString('latin1');
  });
  socket.on('error', () => {});
  socket.write(request);
  const closed = await new Promise<boolean>((resolve) => {
    const guard = setTimeout(() => resolve(false), 2 * CLOSED_WITHIN_MS);
    socket.once('close', () => {
      clearTimeout(guard);
      resolve(true);
    });
  });
  const afterMs = Date.now() - started;
  socket.destroy();
  return { answer, closed, afterMs };
}

describe('slow clients on a listening server (REQUEST_TIMEOUT_MS)', () => {
  let database: TestDatabase;
  let app: App;
  let port: number;
  beforeAll(async () => {
    database = await createTestDatabase('sqlite');
    app = await buildAppOn({ config: testConfig({ REQUEST_TIMEOUT_MS: String(TIMEOUT_MS) }), db: database.db, rateLimiter: new MemoryRateLimiter() });
    await app.listen({ port: 0, host: '127.0.0.1' });
    port = (app.server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await app?.close();
    await database?.destroy();
  });

  // The search refuses a request without a token before its body is read (401), but the half body
  // still holds the connection until the timeout closes it.
  const stalled: [string, string, RegExp][] = [
    ['half a sign-up form', 'POST /signup HTTP/1.1\r\nHost: vinhistory.test\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 200\r\n\r\nemail=slow%40example.com&pass', /^HTTP\/1\.1 408 /],
    ['half a search body', 'POST /api/v1/search HTTP/1.1\r\nHost: vinhistory.test\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"vin":"1HGCM8', /^HTTP\/1\.1 (401|408) /],
    ['headers that never end', 'GET /pricing HTTP/1.1\r\nHost: vinhistory.test\r\nX-Slow: 1\r\n', /^HTTP\/1\.1 408 /],
  ];
  test.each(stalled)('%s: the connection is answered 408 or closed within the timeout', async (_name, request, answer) => {
    const outcome = await sendAndStall(port, request);
    expect(outcome.closed).toBe(true);
    expect(outcome.afterMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
    expect(outcome.afterMs).toBeLessThan(CLOSED_WITHIN_MS);
    if (outcome.answer !== '') expect(outcome.answer).toMatch(answer);
  });

  test('a keep-alive connection idle for longer than the timeout still takes its next request', async () => {
    const socket = connect(port, '127.0.0.1');
    await once(socket, 'connect');
    let answer = '';
    socket.on('data', (chunk: Buffer) => {
      answer += chunk.toString('latin1');
    });
    const closed = once(socket, 'close');
    socket.write('GET /pricing HTTP/1.1\r\nHost: vinhistory.test\r\n\r\n');
    await new Promise((resolve) => setTimeout(resolve, 3 * TIMEOUT_MS));
    socket.write('GET /pricing HTTP/1.1\r\nHost: vinhistory.test\r\nConnection: close\r\n\r\n');
    await closed;
    expect(answer.match(/^HTTP\/1\.1 200 /gm)).toHaveLength(2);
  });

  test('a request whose body arrives in parts within the timeout is answered as before', async () => {
    const socket = connect(port, '127.0.0.1');
    await once(socket, 'connect');
    let answer = '';
    socket.on('data', (chunk: Buffer) => {
      answer += chunk.toString('latin1');
    });
    const closed = once(socket, 'close');
    const body = 'email=slow%40example.com&password=correct+horse+battery';
    socket.write(`POST /signup HTTP/1.1\r\nHost: vinhistory.test\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`);
    await new Promise((resolve) => setTimeout(resolve, TIMEOUT_MS / 5));
    socket.write(body.slice(0, 10));
    await new Promise((resolve) => setTimeout(resolve, TIMEOUT_MS / 5));
    socket.end(body.slice(10));
    await closed;
    // No form token: the form is refused with its page, which it is only once the body was read.
    expect(answer).toMatch(/^HTTP\/1\.1 403 /);
    expect(answer).toContain('This form has expired');
  });
});
