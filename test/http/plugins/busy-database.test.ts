import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../../src/app.ts';
import { migrateToLatest, openDatabase, type Db } from '../../../src/storage/database.ts';
import { createRepositories, type Repositories } from '../../../src/storage/repositories/index.ts';
import { newTestSchemaName } from '../../support/databases.ts';
import { TEST_POSTGRES_URL } from '../../support/env.ts';
import { createAccountTestApp, randomEmail, WebClient, type AccountTestApp } from '../../support/customer-app.ts';
import { expectDocumentedStatuses } from '../../support/documented-statuses.ts';
import { createCustomer, makeLot, validVin, type Customer } from '../../support/fixtures.ts';

/**
 * A CLI import holds SQLite's write lock for one batch at a time. A request that cannot get the
 * lock within the busy timeout is the database being busy, not a fault: 503 with Retry-After.
 * The lock is really held, by a second connection on the same file, as the CLI would.
 */
describe('a busy SQLite database', () => {
  let dir: string;
  let db: Db;
  let repos: Repositories;
  let account: AccountTestApp;
  let app: App;
  let customer: Customer;
  const vin = validVin('5YJ3E1EA7KF31299');

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vinhistory-busy-'));
    // A short busy timeout, so that the test waits 50 ms rather than the server's 5 s.
    db = await openDatabase({ kind: 'sqlite', file: path.join(dir, 'db.sqlite') }, { lockTimeoutMs: 50 });
    await migrateToLatest(db);
    repos = createRepositories(db);
    await repos.lots.upsertBatch([makeLot({ vin })]);
    customer = await createCustomer(repos);
    account = await createAccountTestApp('sqlite', { database: { db, repos, destroy: () => db.close() } });
    app = account.app;
  });
  afterAll(async () => {
    await account?.close();
    await db?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /**
   * Runs `during` while a second connection holds the write locks of both files, as a CLI writing
   * the searches file does (BEGIN IMMEDIATE takes every attached file's lock); an import's batch
   * holds the main file's alone, which a search's commit does not need (searches-file.ts).
   */
  async function withWriteLockHeld<T>(during: () => Promise<T>): Promise<T> {
    const importer = new BetterSqlite3(path.join(dir, 'db.sqlite'));
    importer.prepare('attach database ? as searches').run(path.join(dir, 'db-searches.sqlite'));
    importer.exec('BEGIN IMMEDIATE');
    try {
      return await during();
    } finally {
      importer.exec('ROLLBACK');
      importer.close();
    }
  }

  it('answers a search 503 with Retry-After and a JSON message, and does not count it', async () => {
    const res = await withWriteLockHeld(() =>
      app.inject({ method: 'POST', url: '/api/v1/search', headers: { authorization: customer.token }, payload: { vin } }),
    );
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe('1');
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.json()).toEqual({ code: 'service_busy', message: expect.stringMatching(/busy.*try again/i) });
    expect(await repos.searches.countForAccount(customer.accountId)).toBe(0);

    const after = await app.inject({ method: 'POST', url: '/api/v1/search', headers: { authorization: customer.token }, payload: { vin } });
    expect(after.statusCode).toBe(200);
    expect(await repos.searches.countForAccount(customer.accountId)).toBe(1);
  });

  it("answers the website's form with a 503 page saying the service is busy, to try again", async () => {
    const browser = new WebClient(app);
    await browser.get('/signup');
    const res = await withWriteLockHeld(() => browser.post('/signup', { email: randomEmail(), password: 'correct horse battery', terms: 'accepted' }));
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe('1');
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).toMatch(/busy/i);
    expect(res.body).toMatch(/try again/i);
  });

  it('is documented: 503 with Retry-After on the search and usage operations of the OpenAPI document', async () => {
    const doc = (await app.inject({ url: '/api/v1/openapi.json' })).json<{
      paths: Record<string, Record<string, { responses: Record<string, { headers?: Record<string, unknown> }> }>>;
    }>();
    const operations = Object.entries(doc.paths).flatMap(([path, byMethod]) =>
      Object.entries(byMethod).map(([method, operation]) => ({ name: `${method.toUpperCase()} ${path}`, operation })),
    );
    const searchAndUsage = operations.filter(({ name }) => /\/api\/v1\/(search|usage)/.test(name));
    expect(searchAndUsage.map(({ name }) => name)).toEqual(expect.arrayContaining(['POST /api/v1/search', 'GET /api/v1/usage']));
    for (const { name, operation } of searchAndUsage) {
      expect(Object.keys(operation.responses[503]?.headers ?? {}), name).toContain('Retry-After');
    }
    expectDocumentedStatuses();
  });
});

/**
 * On PostgreSQL a request that waits for a row lock another transaction holds (an import's batch,
 * an operator's session left open) gives up after lock_timeout, as SQLite does after its busy
 * timeout: 503 with Retry-After, not a request hanging for as long as the lock lives.
 */
describe.runIf(TEST_POSTGRES_URL)('a busy PostgreSQL database', () => {
  const LOCK_TIMEOUT_MS = 300;
  const schema = newTestSchemaName();
  let db: Db;
  let repos: Repositories;
  let account: AccountTestApp;
  let app: App;
  let customer: Customer;
  const vin = validVin('5YJ3E1EA7KF31377');

  beforeAll(async () => {
    db = await openDatabase({ kind: 'postgres', url: TEST_POSTGRES_URL! }, { schema, lockTimeoutMs: LOCK_TIMEOUT_MS });
    await migrateToLatest(db);
    repos = createRepositories(db);
    await repos.lots.upsertBatch([makeLot({ vin })]);
    customer = await createCustomer(repos);
    account = await createAccountTestApp('postgres', { database: { db, repos, destroy: () => db.close() } });
    app = account.app;
  });
  afterAll(async () => {
    await account?.close();
    await db?.close();
  });

  /** Runs `during` while another connection holds what `lock` takes, in an open transaction. */
  async function withLockHeld<T>(lock: (client: pg.Client) => Promise<unknown>, during: () => Promise<T>): Promise<T> {
    const other = new pg.Client({ connectionString: TEST_POSTGRES_URL, options: `-c search_path=${schema}` });
    await other.connect();
    try {
      await other.query('begin');
      await lock(other);
      return await during();
    } finally {
      await other.query('rollback');
      await other.end();
    }
  }

  const search = () => app.inject({ method: 'POST', url: '/api/v1/search', headers: { authorization: customer.token }, payload: { vin } });

  it("answers a search waiting on its quota counter's row lock 503 with Retry-After within the lock timeout, and does not count it", async () => {
    expect((await search()).statusCode).toBe(200);
    const started = performance.now();
    const res = await withLockHeld(
      (other) => other.query('select used from usage_counters where account_id = $1 for update', [customer.accountId]),
      search,
    );
    const elapsed = performance.now() - started;
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe('1');
    expect(res.json()).toEqual({ code: 'service_busy', message: expect.stringMatching(/busy.*try again/i) });
    // It waited for the lock (lock_timeout), then gave up at once instead of hanging.
    expect(elapsed).toBeGreaterThanOrEqual(LOCK_TIMEOUT_MS - 50);
    expect(elapsed).toBeLessThan(LOCK_TIMEOUT_MS + 3000);
    expect(await repos.searches.countForAccount(customer.accountId)).toBe(1);
  });

  it("answers the website's form 503 when a throttle's advisory lock is held past the timeout", async () => {
    const ip = '203.0.113.77';
    const browser = new WebClient(app, ip);
    await browser.get('/signup');
    const res = await withLockHeld(
      (other) => other.query('select pg_advisory_xact_lock(hashtextextended($1, 0))', [`auth_attempts:signup:ip:${ip}`]),
      () => browser.post('/signup', { email: randomEmail(), password: 'correct horse battery', terms: 'accepted' }),
    );
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe('1');
    expect(res.body).toMatch(/busy/i);
  });

  it('sets lock_timeout on every pooled connection', async () => {
    const { sql } = await import('kysely');
    const rows = await Promise.all(Array.from({ length: 4 }, () => sql<{ lock_timeout: string }>`show lock_timeout`.execute(db.kysely)));
    for (const { rows: [row] } of rows) expect(row?.lock_timeout).toBe(`${LOCK_TIMEOUT_MS}ms`);
  });
});
