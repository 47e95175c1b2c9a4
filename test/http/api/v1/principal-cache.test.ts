import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SANDBOX_CATALOGUE } from '../../../../src/search/sandbox/catalogue.ts';
import { migrateToLatest, openDatabase, type Db, type DialectName } from '../../../../src/storage/database.ts';
import { createRepositories, type Repositories } from '../../../../src/storage/repositories/index.ts';
import { freePort, makeDataDir, runCli, startServe, stopServer, type CliResult } from '../../../cli/run-cli.ts';
import { DIALECTS, newTestSchemaName } from '../../../support/databases.ts';
import { TEST_POSTGRES_URL } from '../../../support/env.ts';
import { createCustomer, makeLot, validVin, type Customer } from '../../../support/fixtures.ts';

const PUBLIC_BASE_URL = 'https://api.vinhistory.test';
const VIN = validVin('1FMCU9GD4KUA5678');
const LOT_ID = 62000001;
const SANDBOX_VIN = SANDBOX_CATALOGUE[0]!.vin;

interface Answer {
  status: number;
  body: { message?: string; report_url?: string; errors?: Record<string, string[]> } | null;
  headers: Headers;
  /** performance.now() when the request was sent and when its whole answer was read. */
  sent: number;
  received: number;
}

/**
 * A real `vinhistory serve` process holds principals in memory (accounts/principal-cache.ts), and
 * other processes change what they say: the operator's CLI (`tokens revoke`, `subscriptions
 * cancel`) and this test's own repositories (a plan change, a rotation). The contract ("Tokens and
 * caching"): from the moment such a change has committed, no search is counted or answered 200 as
 * if it had not happened, and the order of checks (token, subscription, input, rate, quota) holds.
 *
 * Every scenario first proves that the server answers from its cache: after warming a token, each
 * probe is counted by the server as a cache hit (vinhistory_principal_lookups_total{source="cache"}).
 */
describe.each(DIALECTS)('a server holding cached principals, changed by other processes (%s)', (dialect: DialectName) => {
  const data = makeDataDir();
  let db: Db;
  let repos: Repositories;
  let child: ChildProcess | undefined;
  let baseUrl: string;
  /** The database settings the server and every CLI run get. */
  let databaseEnv: Record<string, string> = {};

  beforeAll(async () => {
    if (dialect === 'sqlite') {
      db = await openDatabase({ kind: 'sqlite', file: path.join(data.dir, 'vinhistory.sqlite') });
    } else {
      const schema = newTestSchemaName();
      db = await openDatabase({ kind: 'postgres', url: TEST_POSTGRES_URL! }, { schema });
      const url = new URL(TEST_POSTGRES_URL!);
      url.searchParams.set('options', `-c search_path=${schema}`);
      databaseEnv = { DATABASE_URL: url.toString() };
    }
    await migrateToLatest(db);
    repos = createRepositories(db);
    await repos.lots.upsertBatch([makeLot({ vin: VIN, lot_id: LOT_ID }), makeLot({ vin: VIN, auction: 'iaai', lot_id: LOT_ID + 1 })]);

    const port = await freePort();
    child = startServe(data.dir, { PORT: String(port), HOST: '127.0.0.1', PUBLIC_BASE_URL, ...databaseEnv });
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    baseUrl = `http://127.0.0.1:${port}`;
    // A start takes seconds on a quiet machine, several times that on a loaded one.
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`serve exited with ${child.exitCode}:\n${output}`);
      if (await fetch(`${baseUrl}/healthz`).then((response) => response.ok, () => false)) break;
      if (Date.now() > deadline) throw new Error(`serve did not answer within 60 s:\n${output}`);
      await sleep(100);
    }
  }, 90_000);

  afterAll(async () => {
    if (child) await stopServer(child);
    await db?.close();
    data.remove();
  });

  const cli = (...args: string[]): Promise<CliResult> => runCli(args, { dataDir: data.dir, env: databaseEnv });

  async function request(pathname: string, token: string, init: { method?: string; body?: string; headers?: Record<string, string> } = {}): Promise<Answer> {
    const sent = performance.now();
    const response = await fetch(`${baseUrl}${pathname}`, {
      method: init.method ?? 'GET',
      headers: { authorization: `Bearer ${token}`, ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}), ...init.headers },
      ...(init.body !== undefined ? { body: init.body } : {}),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : null, headers: response.headers, sent, received: performance.now() };
  }

  const search = (token: string, vin = VIN, headers: Record<string, string> = {}) =>
    request('/api/v1/search', token, { method: 'POST', body: JSON.stringify({ vin }), headers });
  const lookUpLot = (token: string, auction = 'copart', lotId: string | number = LOT_ID) => request(`/api/v1/lots/${auction}/${lotId}`, token);

  /** What the account has been counted: search records and this period's usage. */
  async function ledger(accountId: string) {
    const rows = await db.kysely.selectFrom('usage_counters').select('used').where('account_id', '=', accountId).execute();
    return {
      searches: await repos.searches.countForAccount(accountId),
      reports: await repos.reports.countForAccount(accountId),
      used: rows.reduce((sum, row) => sum + Number(row.used), 0),
    };
  }

  async function addToken(customer: Customer, name: string, kind: 'live' | 'test' = 'live'): Promise<{ id: string; token: string }> {
    const { row, token } = await repos.tokens.create(customer.accountId, name, new Date(), kind);
    return { id: row.id, token };
  }

  /** The server's count of search principals served from its cache (vinhistory_principal_lookups_total). */
  async function cacheHits(): Promise<number> {
    const text = await (await fetch(`${baseUrl}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith('vinhistory_principal_lookups_total{source="cache"}'));
    return line === undefined ? 0 : Number(line.split(' ').pop());
  }

  /** Proves that each (already warmed) token's principal is held in the server's memory: every probe is a cache hit. */
  async function expectCached(_customer: Customer, probes: (() => Promise<Answer>)[]): Promise<void> {
    const before = await cacheHits();
    for (const probe of probes) expect((await probe()).status).toBe(200);
    expect(await cacheHits()).toBe(before + probes.length);
  }

  function expectUnauthenticated(answer: Answer): void {
    expect(answer.status).toBe(401);
    expect(answer.body).toEqual({ message: 'Unauthenticated.' });
    expect(answer.headers.get('www-authenticate')).toBe('Bearer realm="vinhistory", error="invalid_token"');
  }

  function expectSubscriptionRequired(answer: Answer): void {
    expect(answer.status).toBe(402);
    expect(answer.body?.message).toMatch(/no active subscription/);
  }

  it('a token revoked by `vinhistory tokens revoke` answers 401 on its very next search or lot lookup, before every other check, and nothing is counted', async () => {
    const customer = await createCustomer(repos, { quota: 1000, rate: 1000 });
    const viaSearch = await addToken(customer, 'search');
    const viaLot = await addToken(customer, 'lot');
    // Each of these is refused before any commit (by the search service or by the framework) when its token is live.
    const badVin = await addToken(customer, 'bad vin');
    const badAuction = await addToken(customer, 'bad auction');
    const badLotId = await addToken(customer, 'bad lot id');
    const missingVin = await addToken(customer, 'missing vin');
    const getWithoutVin = await addToken(customer, 'get without vin');
    const badJson = await addToken(customer, 'bad json');
    const tooLarge = await addToken(customer, 'too large');
    const badKey = await addToken(customer, 'bad idempotency key');
    const replay = await addToken(customer, 'replay');
    const searchers = [viaSearch, badVin, missingVin, getWithoutVin, badJson, tooLarge, badKey];
    const lookers = [viaLot, badAuction, badLotId];

    for (const { token } of searchers) expect((await search(token)).status).toBe(200);
    for (const { token } of lookers) expect((await lookUpLot(token)).status).toBe(200);
    expect((await search(replay.token, VIN, { 'idempotency-key': 'order-1' })).status).toBe(200);
    await expectCached(customer, [
      ...searchers.map(({ token }) => () => search(token)),
      ...lookers.map(({ token }) => () => lookUpLot(token)),
      () => search(replay.token, VIN, { 'idempotency-key': 'order-1' }),
    ]);
    const before = await ledger(customer.accountId);

    // The operator's CLI, a process of its own, revokes two of them; the rest are revoked the same
    // way (one UPDATE) by this test's process, which saves a CLI start-up (seconds) apiece.
    const revoked = await Promise.all([cli('tokens', 'revoke', '--token', viaSearch.token), cli('tokens', 'revoke', '--token', viaLot.token)]);
    for (const result of revoked) {
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toBe('token revoked\n');
    }
    for (const { id } of [badVin, badAuction, badLotId, missingVin, getWithoutVin, badJson, tooLarge, badKey, replay]) {
      expect(await repos.tokens.revokeForAccount(customer.accountId, id)).toBe(true);
    }

    expectUnauthenticated(await search(viaSearch.token));
    expectUnauthenticated(await lookUpLot(viaLot.token));
    // Not 422: the token is checked first.
    expectUnauthenticated(await search(badVin.token, '1FMCU9GD4KUA567'));
    expectUnauthenticated(await lookUpLot(badAuction.token, 'nosuchauction'));
    expectUnauthenticated(await lookUpLot(badLotId.token, 'copart', 'abc'));
    expectUnauthenticated(await search(badKey.token, VIN, { 'idempotency-key': 'two words' }));
    expectUnauthenticated(await request('/api/v1/search', missingVin.token, { method: 'POST', body: '{}' }));
    expectUnauthenticated(await request('/api/v1/search', getWithoutVin.token));
    // Not 400 or 413 either: before the body is read, the token is.
    expectUnauthenticated(await request('/api/v1/search', badJson.token, { method: 'POST', body: '{"vin": ' }));
    expectUnauthenticated(await request('/api/v1/search', tooLarge.token, { method: 'POST', body: JSON.stringify({ vin: VIN, pad: 'x'.repeat(8192) }) }));
    // Not the earlier report replayed: a replay is a search answered 200.
    expectUnauthenticated(await search(replay.token, VIN, { 'idempotency-key': 'order-1' }));
    expect(await ledger(customer.accountId)).toEqual(before);
  }, 120_000);

  it('a token revoked while its rate is used up answers 401, not 429', async () => {
    const customer = await createCustomer(repos, { quota: 1000, rate: 1 });
    // The rate window is one second and a CLI start-up takes longer: the revocation comes from this
    // test's process. The second search is surely decided within one second of the first only when
    // its answer came back within a second of the first one's sending; a slower machine tries again.
    let exercised = false;
    for (let attempt = 0; attempt < 5 && !exercised; attempt++) {
      if (attempt > 0) await sleep(1100);
      const { id, token } = await addToken(customer, `rate ${attempt}`);
      const first = await search(token);
      expect(first.status).toBe(200);
      expect(await repos.tokens.revokeForAccount(customer.accountId, id)).toBe(true);
      const before = await ledger(customer.accountId);
      const second = await search(token);
      expectUnauthenticated(second);
      expect(await ledger(customer.accountId)).toEqual(before);
      exercised = second.received - first.sent < 1000;
    }
    expect(exercised, 'a second search decided within the first one\'s second').toBe(true);
    // The control: once the window is clear, a live token of the same account is refused by the rate at once.
    await sleep(1100);
    const control = await addToken(customer, 'control');
    const a = await search(control.token);
    const b = await search(control.token);
    expect(a.status).toBe(200);
    if (b.received - a.sent < 1000) expect(b.status).toBe(429);
  }, 60_000);

  it('a subscription cancelled by `vinhistory subscriptions cancel` answers 402 at once, before the input check; a plan bought again is honoured at once', async () => {
    const email = `cancel-${dialect}-${Date.now()}@example.com`;
    const customer = await createCustomer(repos, { quota: 1000, rate: 1000, email });
    const viaSearch = await addToken(customer, 'search');
    const viaLot = await addToken(customer, 'lot');
    const badVin = await addToken(customer, 'bad vin');
    const sandbox = await addToken(customer, 'sandbox', 'test');
    expect((await search(viaSearch.token)).status).toBe(200);
    expect((await lookUpLot(viaLot.token)).status).toBe(200);
    expect((await search(badVin.token)).status).toBe(200);
    expect((await search(sandbox.token, SANDBOX_VIN)).status).toBe(200);
    await expectCached(customer, [() => search(viaSearch.token), () => lookUpLot(viaLot.token), () => search(badVin.token), () => search(sandbox.token, SANDBOX_VIN)]);
    const before = await ledger(customer.accountId);

    const cancelled = await cli('subscriptions', 'cancel', '--email', email);
    expect(cancelled.code, cancelled.stderr).toBe(0);
    expect(cancelled.stdout).toMatch(/^cancelled the custom-\S+ subscription/);

    expectSubscriptionRequired(await search(viaSearch.token));
    expectSubscriptionRequired(await lookUpLot(viaLot.token));
    expectSubscriptionRequired(await search(badVin.token, '1FMCU9GD4KUA567'));
    expect(await ledger(customer.accountId)).toEqual(before);
    // A sandbox token searches without a plan: its principal is read afresh and it goes on.
    expect((await search(sandbox.token, SANDBOX_VIN)).status).toBe(200);
    // Still refused, now read afresh.
    expectSubscriptionRequired(await search(viaSearch.token));

    // The customer buys a plan again (here, straight into the database, as a payment would): the
    // tokens that were just told 402 search at once, with no minute of stale refusals.
    await repos.subscriptions.create({ accountId: customer.accountId, planCode: customer.planCode, billing: 'monthly', startedAt: new Date(Date.now() - 1000) });
    expect((await search(viaSearch.token)).status).toBe(200);
    expect((await lookUpLot(viaLot.token)).status).toBe(200);
  }, 120_000);

  it('a plan changed by another process holds the very next search and lot lookup to the new quota', async () => {
    const customer = await createCustomer(repos, { quota: 1000, rate: 1000 });
    const viaSearch = await addToken(customer, 'search');
    const viaLot = await addToken(customer, 'lot');
    expect((await search(viaSearch.token)).headers.get('ratelimit-policy')).toMatch(/"month";q=1000;/);
    expect((await lookUpLot(viaLot.token)).status).toBe(200);
    await expectCached(customer, [() => search(viaSearch.token), () => lookUpLot(viaLot.token)]);
    const before = await ledger(customer.accountId);
    expect(before.used).toBe(4);

    const subscription = (await repos.subscriptions.findActive(customer.accountId))!;
    const smaller = `smaller-${dialect}-${Date.now()}`;
    await repos.plans.create({ code: smaller, name: 'Smaller', monthlyQuota: 4, ratePerSecond: 1000, monthlyPriceCents: 0 });
    await repos.subscriptions.changePlan(subscription.id, smaller);

    for (const answer of [await search(viaSearch.token), await lookUpLot(viaLot.token)]) {
      expect(answer.status).toBe(429);
      expect(answer.body?.message).toMatch(/quota/i);
      expect(answer.headers.get('ratelimit-policy')).toMatch(/"month";q=4;/);
    }
    expect(await ledger(customer.accountId)).toEqual(before);

    // And the other way: a larger plan is searched under at once.
    const larger = `larger-${dialect}-${Date.now()}`;
    await repos.plans.create({ code: larger, name: 'Larger', monthlyQuota: 6, ratePerSecond: 1000, monthlyPriceCents: 0 });
    await repos.subscriptions.changePlan(subscription.id, larger);
    const allowed = await search(viaSearch.token);
    expect(allowed.status).toBe(200);
    expect(allowed.headers.get('ratelimit-policy')).toMatch(/"month";q=6;/);
    expect((await lookUpLot(viaLot.token)).status).toBe(200);
    expect((await search(viaSearch.token)).status).toBe(429);
    expect((await ledger(customer.accountId)).used).toBe(6);
  }, 60_000);

  it('a rotated token keeps working through its grace period and is refused the moment it ends', async () => {
    const customer = await createCustomer(repos, { quota: 1000, rate: 1000 });
    const viaSearch = await addToken(customer, 'search');
    const viaLot = await addToken(customer, 'lot');
    expect((await search(viaSearch.token)).status).toBe(200);
    expect((await lookUpLot(viaLot.token)).status).toBe(200);
    await expectCached(customer, [() => search(viaSearch.token), () => lookUpLot(viaLot.token)]);

    // A grace of a few seconds instead of the product's day, so that its end can be waited for.
    const graceEndsAt = new Date(Date.now() + 3000);
    const rotatedSearch = await repos.tokens.rotateForAccount(customer.accountId, viaSearch.id, graceEndsAt);
    const rotatedLot = await repos.tokens.rotateForAccount(customer.accountId, viaLot.id, graceEndsAt);
    expect(rotatedSearch && rotatedLot).toBeTruthy();

    // During the grace: the old tokens and their successors all work.
    const during = [await search(viaSearch.token), await lookUpLot(viaLot.token), await search(rotatedSearch!.token), await lookUpLot(rotatedLot!.token)];
    // Answers that came back before the grace ended were decided within it (a machine so slow that
    // they did not would only leave the successors' answers to check).
    if (Date.now() < graceEndsAt.getTime()) expect(during.map((answer) => answer.status)).toEqual([200, 200, 200, 200]);
    else expect(during.slice(2).map((answer) => answer.status)).toEqual([200, 200]);

    await sleep(Math.max(0, graceEndsAt.getTime() - Date.now()) + 50);
    const before = await ledger(customer.accountId);
    expectUnauthenticated(await search(viaSearch.token));
    expectUnauthenticated(await lookUpLot(viaLot.token));
    expect(await ledger(customer.accountId)).toEqual(before);
    expect((await search(rotatedSearch!.token)).status).toBe(200);
  }, 60_000);

  it('searches in flight while the CLI revokes the token: once the revocation is seen, no search sent later is answered 200, and only the 200s were counted', async () => {
    const customer = await createCustomer(repos, { quota: 1_000_000, rate: 1_000_000 });
    const { token } = await addToken(customer, 'busy');
    expect((await search(token)).status).toBe(200);
    await expectCached(customer, [() => search(token)]);

    const answers: Answer[] = [];
    const revocation = { started: Infinity, ended: Infinity, done: false };
    const revoking = (async () => {
      // Let the load run first, so that searches are surely in flight when the CLI starts.
      await sleep(300);
      revocation.started = performance.now();
      try {
        const result = await cli('tokens', 'revoke', '--token', token);
        revocation.ended = performance.now();
        expect(result.code, result.stderr).toBe(0);
      } finally {
        // The loads stop even when the CLI failed.
        revocation.done = true;
      }
    })();
    /** Each loop sends one request after another, alternating the two routes, until it has sent 10 after the CLI ended. */
    const loop = async (lane: number) => {
      let afterRevocation = 0;
      for (let i = 0; afterRevocation < 10; i++) {
        const sentAfter = revocation.done;
        const answer = (i + lane) % 3 === 0 ? await lookUpLot(token) : await search(token);
        answers.push(answer);
        if (sentAfter) afterRevocation++;
        // A breath between requests: the machine's cores are shared, and the CLI has to start too.
        await sleep(2);
      }
    };
    await Promise.all([revoking, loop(0), loop(1), loop(2), loop(3)]);
    const { started, ended } = revocation;

    expect(answers.filter((answer) => answer.status !== 200 && answer.status !== 401).map((answer) => answer.status)).toEqual([]);
    // The CLI's transaction committed between its start and its exit.
    expect(answers.filter((answer) => answer.received < started && answer.status !== 200)).toEqual([]);
    expect(answers.filter((answer) => answer.sent > ended && answer.status !== 401)).toEqual([]);
    // Sharper: the first 401 shows the revocation had committed; every search sent after it was read is refused.
    const firstRefusal = Math.min(...answers.filter((answer) => answer.status === 401).map((answer) => answer.received));
    const lateSuccesses = answers.filter((answer) => answer.sent > firstRefusal && answer.status === 200);
    expect(lateSuccesses.map((answer) => `200 sent ${(answer.sent - firstRefusal).toFixed(1)} ms after the first 401`)).toEqual([]);
    // Searches were indeed in flight across the revocation.
    expect(answers.filter((answer) => answer.sent < started && answer.status === 200).length).toBeGreaterThan(0);
    expect(answers.filter((answer) => answer.sent > ended).length).toBeGreaterThanOrEqual(40);

    // Every counted search was answered 200, and every 200 was counted: none of the 401s was.
    // (+ 3: the warming search and the two that showed the cache.)
    const successes = answers.filter((answer) => answer.status === 200).length + 2;
    expect(await ledger(customer.accountId)).toEqual({ searches: successes, reports: successes, used: successes });
  }, 120_000);
});
