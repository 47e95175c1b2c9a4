import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../support/app.ts';
import { createCustomer, makeLot, validVin, type Customer } from '../../support/fixtures.ts';

type Json = Record<string, any>;

/**
 * The customers' OpenAPI document as a third-party validating proxy reads it: Stoplight Prism
 * (`prism proxy`) between a client and the real server. Prism forwards every request by default
 * and reports what breaks the document in an `sl-violations` header; with `--errors` it refuses a
 * request the document calls invalid with its own 422 (a documented 422 does not change that) and
 * a response the document does not allow with its own error. Both modes run here: the document
 * must let the server's own answers through, and must describe every answer the server gives.
 */

const PRISM = path.resolve('node_modules/.bin/prism');

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

interface Prism {
  url: string;
  child: ChildProcess;
  output(): string;
}

async function startPrism(document: string, upstream: string, flags: string[]): Promise<Prism> {
  const port = await freePort();
  const child = spawn(PRISM, ['proxy', document, upstream, '--port', String(port), '--host', '127.0.0.1', ...flags], {
    stdio: ['ignore', 'pipe', 'pipe'],
    // Prism forks its server under NODE_ENV=production; one process is simpler to stop.
    env: { ...process.env, NODE_ENV: 'test' },
  });
  // The last few kilobytes of its log, for a failure's message; read all of it so the pipe never fills.
  let log = '';
  const keep = (chunk: Buffer) => {
    log = (log + chunk.toString()).slice(-8192);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`prism exited with ${child.exitCode}:\n${log}`);
    try {
      await fetch(`${url}/healthz`);
      return { url, child, output: () => log };
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
  child.kill('SIGKILL');
  throw new Error(`prism did not answer on ${url} within 60 s:\n${log}`);
}

async function stopPrism(prism: Prism | undefined): Promise<void> {
  if (!prism || prism.child.exitCode !== null) return;
  const exited = new Promise((resolve) => prism.child.once('exit', resolve));
  prism.child.kill('SIGTERM');
  await exited;
}

interface Answer {
  status: number;
  body: Json;
  violations: Json[];
}

/** Prism's findings on one exchange (empty without the header), each `{ location, message, severity }`. */
function violationsOf(res: Response): Json[] {
  const header = res.headers.get('sl-violations');
  if (header === null) return [];
  if (header.startsWith('Too many violations!')) throw new Error(header.slice(0, 500));
  return JSON.parse(header) as Json[];
}

describe('the customers OpenAPI document through Prism', () => {
  let t: TestApp;
  let customer: Customer;
  let folder: string;
  let forwarding: Prism | undefined;
  let validating: Prism | undefined;
  let upstream: string;
  const vin = validVin();

  beforeAll(async () => {
    if (!existsSync(PRISM)) throw new Error(`Prism is not installed (${PRISM}): run npm install (it is a devDependency, @stoplight/prism-cli)`);
    t = await createTestApp('sqlite');
    customer = await createCustomer(t.repos, { quota: 1_000_000, rate: 1_000_000 });
    await t.repos.lots.upsertBatch([makeLot({ vin, auction: 'copart', lot_id: 90000012 })]);
    upstream = await t.app.listen({ host: '127.0.0.1', port: 0 });
    folder = mkdtempSync(path.join(tmpdir(), 'vinhistory-prism-'));
    const document = path.join(folder, 'openapi.json');
    writeFileSync(document, (await t.app.inject({ url: '/api/v1/openapi.json' })).body);
    [forwarding, validating] = await Promise.all([startPrism(document, upstream, []), startPrism(document, upstream, ['--errors'])]);
  });

  afterAll(async () => {
    await Promise.all([stopPrism(forwarding), stopPrism(validating)]);
    await t?.close();
    if (folder) rmSync(folder, { recursive: true, force: true });
  });

  async function ask(prism: Prism, method: string, url: string, options: { headers?: Record<string, string>; body?: Json } = {}): Promise<Answer> {
    const res = await fetch(`${prism.url}${url}`, {
      method,
      headers: {
        authorization: customer.token,
        ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
        ...options.headers,
      },
      ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
    });
    const text = await res.text();
    let body: Json;
    try {
      body = JSON.parse(text);
    } catch {
      throw new Error(`${method} ${url}: ${res.status} not JSON: ${text.slice(0, 300)}\n${prism.output()}`);
    }
    return { status: res.status, body, violations: violationsOf(res) };
  }

  /** The server's own answer to the same request, asked directly (a search of a known VIN counts; the quota is ample). */
  async function direct(method: string, url: string, options: { headers?: Record<string, string>; body?: Json } = {}) {
    const res = await t.app.inject({
      method: method as 'GET',
      url,
      headers: { authorization: customer.token, ...options.headers },
      ...(options.body === undefined ? {} : { payload: options.body }),
    });
    return { status: res.statusCode, body: res.json<Json>() };
  }

  const badCheckDigit = `${vin.slice(0, 8)}${vin[8] === 'X' ? '0' : 'X'}${vin.slice(9)}`;
  const searches: { label: string; method?: string; url: string; body?: Json; headers?: Record<string, string>; status: number; code?: string; field?: string }[] = [
    { label: 'a malformed VIN', url: '/api/v1/search?vin=NOT-A-VIN', status: 422, code: 'invalid_request', field: 'vin' },
    { label: 'a malformed VIN in a JSON body', method: 'POST', url: '/api/v1/search', body: { vin: 'NOT-A-VIN' }, status: 422, code: 'invalid_request', field: 'vin' },
    { label: 'a VIN with a bad check digit', url: `/api/v1/search?vin=${badCheckDigit}`, status: 422, code: 'invalid_request', field: 'vin' },
    {
      label: 'an Idempotency-Key of 256 characters',
      url: `/api/v1/search?vin=${vin}`,
      headers: { 'idempotency-key': 'k'.repeat(256) },
      status: 422,
      code: 'invalid_request',
      field: 'Idempotency-Key',
    },
    { label: 'a valid search', url: `/api/v1/search?vin=${vin}`, status: 200 },
  ];

  describe.each([
    ['forwarding (default)', () => forwarding!],
    ['validating (--errors)', () => validating!],
  ])('Prism %s', (_mode, prismOf) => {
    it.each(searches)('lets $label on a search reach the server and brings back its answer', async ({ method = 'GET', url, body, headers, status, code, field }) => {
      const options = { ...(headers ? { headers } : {}), ...(body ? { body } : {}) };
      const answer = await ask(prismOf(), method, url, options);
      expect(answer.status, JSON.stringify(answer.body)).toBe(status);
      if (status === 200) {
        expect(answer.body.vin).toBe(vin);
        expect(answer.body.lots).toHaveLength(1);
      } else {
        // The server's body (its code and field), not Prism's problem+json ({ type, title, detail, validation }).
        expect(answer.body.code).toBe(code);
        expect(Object.keys(answer.body.errors)).toEqual([field]);
        expect(answer.body).toEqual((await direct(method, url, options)).body);
      }
      // Neither the request nor the server's answer breaks the document.
      expect(answer.violations).toEqual([]);
    });
  });

  const refusedByTheDocument: { label: string; method: string; url: string; body?: Json; field: string }[] = [
    { label: 'an empty webhook url', method: 'PUT', url: '/api/v1/webhook', body: { url: '' }, field: 'url' },
    { label: 'a watch of both a VIN and a lot', method: 'POST', url: '/api/v1/watches', body: { vin: '4JGBF7BE5AA585531', auction: 'copart', lot_id: 1 }, field: 'body' },
    { label: 'a cursor of 201 characters', method: 'GET', url: `/api/v1/watches?cursor=${'A'.repeat(201)}`, field: 'cursor' },
  ];

  it.each(refusedByTheDocument)('forwards $label and brings back the server’s documented 422', async ({ method, url, body, field }) => {
    const answer = await ask(forwarding!, method, url, body ? { body } : {});
    expect(answer.status, JSON.stringify(answer.body)).toBe(422);
    expect(answer.body.code).toBe('invalid_request');
    expect(Object.keys(answer.body.errors)).toEqual([field]);
    expect(answer.body).toEqual((await direct(method, url, body ? { body } : {})).body);
    // The document calls the request invalid (what Schemathesis asked of it) and describes the server's 422.
    expect(answer.violations.length).toBeGreaterThan(0);
    expect(answer.violations.filter((violation) => violation.location[0] !== 'request')).toEqual([]);
  });

  // The trade-off decided in docs/decisions.md: these bounds the document states (Schemathesis asked
  // it to), so a validating proxy refuses them itself, naming the field, before the server is asked.
  it.each(refusedByTheDocument)('with --errors, refuses $label itself, naming the field the document bounds', async ({ method, url, body, field }) => {
    const answer = await ask(validating!, method, url, body ? { body } : {});
    expect(answer.status, JSON.stringify(answer.body)).toBe(422);
    expect(answer.body.code).toBeUndefined();
    const where = (answer.body.validation as Json[]).map((violation) => violation.location.join('.'));
    expect(where.some((location) => (field === 'body' ? location.startsWith('body') : location.endsWith(field))), where.join(', ')).toBe(true);
  });
});
