import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest, openDatabase } from '../../src/storage/database.ts';
import { createRepositories, type Repositories } from '../../src/storage/repositories/index.ts';
import type { Db } from '../../src/storage/database.ts';
import { newTestSchemaName } from '../support/databases.ts';
import { TEST_POSTGRES_URL, TEST_REDIS_URL } from '../support/env.ts';
import { createCustomer, makeLot, validVin, type Customer } from '../support/fixtures.ts';
import { RedisServerProcess } from '../support/redis-server.ts';
import { TcpProxy } from '../support/tcp-proxy.ts';
import { metricValue, startInstance, stopInstance, type Instance } from './instances.ts';

interface Outcome {
  status: number;
  instance: number;
  body: { report_url?: string; message?: string } | null;
}

/** A request's local send and receive times: the instance decided somewhere between them. */
interface Bracket {
  sent: number;
  received: number;
}

/**
 * Groups of `limit + 1` accepted requests that were surely decided within less than one second
 * (the last answer came back less than a second after the first was sent), i.e. one-second windows
 * that held more than `limit`. Slow answers can hide a crowded window, never invent one.
 */
function crowdedWindows(accepted: Bracket[], limit: number, origin: number): string[] {
  const sorted = [...accepted].sort((a, b) => a.sent - b.sent);
  const crowded: string[] = [];
  for (let i = 0; i + limit < sorted.length; i++) {
    const group = sorted.slice(i, i + limit + 1);
    const span = Math.max(...group.map((r) => r.received)) - group[0]!.sent;
    if (span < 1000) crowded.push(`${limit + 1} accepted within ${span.toFixed(0)} ms from ${(group[0]!.sent - origin).toFixed(0)} ms`);
  }
  return crowded;
}

/**
 * The same on the instances' own decision times (a search's origin_timestamp is taken the moment
 * its rate decision returns, wall clock, shared by the processes of one machine): groups of
 * `limit + 1` within less than one second minus `jitterMs`, the slack for an answer that waited
 * to be read (this machine's cores are shared). Sharper than the brackets when answers are slow.
 */
function crowdedStamps(stamps: number[], limit: number, jitterMs: number, origin: number): string[] {
  const sorted = [...stamps].sort((a, b) => a - b);
  const crowded: string[] = [];
  for (let i = 0; i + limit < sorted.length; i++) {
    const span = sorted[i + limit]! - sorted[i]!;
    if (span < 1000 - jitterMs) crowded.push(`${limit + 1} decided within ${span} ms from ${sorted[i]! - origin} ms`);
  }
  return crowded;
}

/** A moment an instance's log says it started or stopped deciding alone (wall clock). */
interface ModeChange {
  time: number;
  alone: boolean;
}

function modeChanges(instance: Instance): ModeChange[] {
  const changes: ModeChange[] = [];
  for (const line of instance.logs) {
    const alone = line.includes('Redis unreachable or slow');
    if (!alone && !line.includes('Redis answers again')) continue;
    changes.push({ time: (JSON.parse(line) as { time: number }).time, alone });
  }
  return changes;
}

/** Whether the instance decided alone at any moment within [from, to]. */
function aloneWithin(changes: ModeChange[], from: number, to: number): boolean {
  let alone = false;
  for (const change of changes) {
    if (change.time > to) break;
    if (change.time >= from && change.alone) return true;
    alone = change.alone;
  }
  return alone;
}

/**
 * The proof on real processes: three `vinhistory serve` instances on different ports share one
 * PostgreSQL schema and one Redis (a redis-server of the suite's own, reached through a TCP proxy
 * the test can break, and which the test can kill and restart), and every limit stays exact
 * whichever instance a request hits.
 */
describe.runIf(TEST_POSTGRES_URL && TEST_REDIS_URL)('three instances on one PostgreSQL and one Redis', () => {
  let db: Db;
  let repos: Repositories;
  let proxy: TcpProxy;
  let redisServer: RedisServerProcess;
  let instances: Instance[] = [];
  const vin = validVin('1FMCU9GD4KUA1234');
  const unknownVin = validVin('1GCUYDED5LZ12345');

  beforeAll(async () => {
    const schema = newTestSchemaName();
    db = await openDatabase({ kind: 'postgres', url: TEST_POSTGRES_URL! }, { schema });
    await migrateToLatest(db);
    repos = createRepositories(db);
    await repos.lots.upsertBatch([makeLot({ vin, lot_id: 61000001 }), makeLot({ vin, auction: 'iaai', lot_id: 61000002 })]);

    redisServer = await RedisServerProcess.start();
    proxy = new TcpProxy('127.0.0.1', redisServer.port);
    await proxy.start();
    const databaseUrl = new URL(TEST_POSTGRES_URL!);
    databaseUrl.searchParams.set('options', `-c search_path=${schema}`);
    const env = {
      DATABASE_URL: databaseUrl.toString(),
      REDIS_URL: `redis://127.0.0.1:${proxy.port}`,
      PUBLIC_BASE_URL: 'https://api.vinhistory.test',
      // The product default is 50 ms. Three servers and this test share two cores here, and an event
      // loop that busy can take longer than that to read a prompt answer, which would send a
      // healthy instance to its fallback in the middle of the rate test.
      REDIS_TIMEOUT_MS: '250',
    };
    // Started together: their migrations race on one schema and must settle through Kysely's lock.
    const started = await Promise.allSettled([startInstance(env), startInstance(env), startInstance(env)]);
    instances = started.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
    const failed = started.find((result) => result.status === 'rejected');
    // afterAll stops the ones that did start.
    if (failed) throw failed.reason;
    // Warm the connection pools so that a burst measures the limits, not connection set-up.
    await Promise.all(instances.map((instance) => fetch(`${instance.url}/healthz`)));
  }, 90_000);

  afterAll(async () => {
    await Promise.all(instances.map((instance) => stopInstance(instance)));
    await proxy?.stop();
    await redisServer?.stop();
    await db?.close();
  });

  async function send(customer: Customer, instance: number, searchVin: string, headers: Record<string, string> = {}): Promise<Outcome> {
    const response = await fetch(`${instances[instance]!.url}/api/v1/search`, {
      method: 'POST',
      headers: { authorization: customer.token, 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ vin: searchVin }),
    });
    const text = await response.text();
    return { status: response.status, instance, body: text ? JSON.parse(text) : null };
  }

  it('grants each account exactly its monthly quota across the instances, and stores exactly that', async () => {
    const quotas = [7, 11, 13, 4];
    const customers = await Promise.all(quotas.map((quota) => createCustomer(repos, { quota, rate: 10_000 })));
    // Each account's first two searches go one after the other through two different instances,
    // so that the quota is surely spent through more than one of them; the flood that follows
    // races the instances for the rest.
    const opening: (Outcome & { account: number })[] = [];
    for (const [account, customer] of customers.entries()) {
      for (const instance of [account % 3, (account + 1) % 3]) {
        opening.push({ ...(await send(customer, instance, vin)), account });
      }
    }
    expect(opening.map((o) => o.status)).toEqual(opening.map(() => 200));
    const requests: Promise<Outcome & { account: number }>[] = [];
    for (let i = 0; i < 240; i++) {
      const account = i % customers.length;
      requests.push(send(customers[account]!, i % 3, i % 7 === 0 ? unknownVin : vin).then((o) => ({ ...o, account })));
    }
    const outcomes = [...opening, ...(await Promise.all(requests))];
    for (const [index, customer] of customers.entries()) {
      const mine = outcomes.filter((o) => o.account === index);
      const counted = mine.filter((o) => o.status === 200 || o.status === 404);
      expect(counted, `account ${index}`).toHaveLength(quotas[index]!);
      expect(mine.filter((o) => o.status === 429)).toHaveLength(mine.length - quotas[index]!);
      expect(await repos.searches.countForAccount(customer.accountId)).toBe(quotas[index]);
      expect(await repos.reports.countForAccount(customer.accountId)).toBe(mine.filter((o) => o.status === 200).length);
    }
    expect(outcomes.filter((o) => o.status >= 500)).toHaveLength(0);
    // Every instance answered, and the quotas were spent through more than one of them (the
    // opening made sure of that; which instances win the flood's races is no fault of theirs).
    for (const [index, instance] of instances.entries()) {
      expect(outcomes.filter((o) => o.instance === index).length, `instance ${index} answered`).toBeGreaterThan(0);
      expect(await metricValue(instance, 'vinhistory_http_requests_total', { route: '/api/v1/search' })).toBeGreaterThan(0);
    }
    const counting = new Set(outcomes.filter((o) => o.status === 200 || o.status === 404).map((o) => o.instance));
    expect(counting.size, 'instances that counted searches').toBeGreaterThan(1);
  });

  /** Waits until no instance is on its in-process fallback. */
  async function sharedLimitingOnEverywhere(): Promise<void> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const degraded = await Promise.all(instances.map((instance) => metricValue(instance, 'vinhistory_rate_limiter_degraded')));
      if (degraded.every((value) => value === 0)) return;
      if (Date.now() > deadline) throw new Error(`instances still degraded: ${degraded.join(', ')}`);
      await sleep(200);
    }
  }

  it("grants each account exactly its per-second rate across the instances (Redis holds the window)", async () => {
    await sharedLimitingOnEverywhere();
    const rates = [5, 8];
    const customers = await Promise.all(rates.map((rate) => createCustomer(repos, { quota: 1_000_000, rate })));
    const started = performance.now();
    const outcomes = await Promise.all(
      Array.from({ length: 90 }, (_, i) => send(customers[i % 2]!, i % 3, vin).then((o) => ({ ...o, account: i % 2 }))),
    );
    const elapsed = performance.now() - started;
    for (const [index, rate] of rates.entries()) {
      const allowed = outcomes.filter((o) => o.account === index && o.status === 200).length;
      if (elapsed < 1000) expect(allowed, `account ${index}`).toBe(rate);
      else expect(allowed).toBeLessThanOrEqual(rate * Math.ceil(elapsed / 1000));
      expect(allowed).toBeGreaterThanOrEqual(rate);
      expect(await repos.searches.countForAccount(customers[index]!.accountId)).toBe(allowed);
      const limited = outcomes.filter((o) => o.account === index && o.status === 429);
      for (const o of limited) expect(o.body?.message).toMatch(/rate limit/i);
    }
  });

  it('answers repeats of one Idempotency-Key on different instances with one report, counted once', async () => {
    const customer = await createCustomer(repos, { quota: 50, rate: 1000 });
    const outcomes = await Promise.all(Array.from({ length: 12 }, (_, i) => send(customer, i % 3, vin, { 'idempotency-key': 'order-7781' })));
    expect(outcomes.map((o) => o.status)).toEqual(Array(12).fill(200));
    expect(new Set(outcomes.map((o) => o.body?.report_url)).size).toBe(1);
    expect(await repos.searches.countForAccount(customer.accountId)).toBe(1);
  });

  it('keeps serving when Redis hangs or dies mid-load, with an exact quota, and recovers by itself, with no request', async () => {
    const customer = await createCustomer(repos, { quota: 30, rate: 1000 });
    const before = await Promise.all(instances.map((instance) => metricValue(instance, 'vinhistory_rate_limiter_fallbacks_total')));

    const load = (count: number, offset: number) => Promise.all(Array.from({ length: count }, (_, i) => send(customer, (i + offset) % 3, vin)));
    const first = await load(10, 0);
    proxy.blackhole();
    const started = performance.now();
    const duringHang = await load(15, 1);
    const hangTook = performance.now() - started;
    proxy.down();
    const duringOutage = await load(20, 2);

    const all = [...first, ...duringHang, ...duringOutage];
    expect(all.filter((o) => o.status >= 500)).toHaveLength(0);
    expect(all.filter((o) => o.status === 200)).toHaveLength(30);
    expect(all.filter((o) => o.status === 429).every((o) => /quota/i.test(o.body?.message ?? ''))).toBe(true);
    expect(await repos.searches.countForAccount(customer.accountId)).toBe(30);
    // A hung Redis costs each instance one short timeout, not seconds.
    expect(hangTook).toBeLessThan(3000);

    const after = await Promise.all(instances.map((instance) => metricValue(instance, 'vinhistory_rate_limiter_fallbacks_total')));
    expect(after.reduce((a, b) => a + b, 0)).toBeGreaterThan(before.reduce((a, b) => a + b, 0));
    for (const instance of instances) {
      expect(await metricValue(instance, 'vinhistory_rate_limiter_degraded')).toBe(1);
      expect(instance.logs.some((line) => line.includes('Redis unreachable or slow'))).toBe(true);
    }

    // No request is needed to come back: each instance follows its Redis client's reconnection.
    proxy.restore();
    const deadline = Date.now() + 15_000;
    let degraded = Infinity;
    while (Date.now() < deadline) {
      degraded = (await Promise.all(instances.map((instance) => metricValue(instance, 'vinhistory_rate_limiter_degraded')))).reduce((a, b) => a + b, 0);
      if (degraded === 0) break;
      await sleep(250);
    }
    expect(degraded).toBe(0);
    for (const instance of instances) expect(instance.logs.some((line) => line.includes('shared rate limiting resumed'))).toBe(true);
  }, 60_000);

  it('while Redis dies and comes back empty, no one-second window holds more than instances x rate, and once it is back, no more than the rate', async () => {
    await sharedLimitingOnEverywhere();
    const rate = 3;
    const customer = await createCustomer(repos, { quota: 1_000_000, rate });
    // Every instance has stopped deciding alone within this long after Redis is back: a reconnect
    // attempt every 500 ms at most, then the connection and its ready check, which an instance
    // busy with a queue of requests on a shared machine handles late (about 0.5 s when idle).
    const SETTLE_MS = 5000;
    const JITTER_MS = 300;
    const BURST = 15;
    const BURST_EVERY_MS = 500;

    const accepted: (Bracket & { stamp: number })[] = [];
    const statuses: number[] = [];
    const requests: Promise<void>[] = [];
    const origin = performance.now();
    const wallOrigin = Date.now();
    let running = true;
    const traffic = (async () => {
      for (let burst = 0; running; burst++) {
        for (let i = 0; i < BURST; i++) {
          const sent = performance.now();
          requests.push(
            send(customer, i % 3, vin).then((outcome) => {
              statuses.push(outcome.status);
              const stamp = Date.parse((outcome.body as { origin_timestamp?: string } | null)?.origin_timestamp ?? '');
              if (outcome.status === 200) accepted.push({ sent, received: performance.now(), stamp });
            }),
          );
        }
        await sleep(Math.max(0, origin + (burst + 1) * BURST_EVERY_MS - performance.now()));
      }
    })();

    await sleep(1500);
    await redisServer.kill();
    const killedAt = Date.now();
    await sleep(2500);
    await redisServer.restart();
    const backAt = Date.now();
    const backOnRedis = (instance: Instance) => modeChanges(instance).some((change) => !change.alone && change.time >= backAt);
    while (!instances.every(backOnRedis) && Date.now() < backAt + SETTLE_MS) await sleep(50);
    await sleep(3000);
    running = false;
    await traffic;
    await Promise.all(requests);

    expect(statuses.filter((status) => status !== 200 && status !== 429)).toEqual([]);
    expect(await repos.searches.countForAccount(customer.accountId)).toBe(accepted.length);
    expect(accepted.every((r) => Number.isFinite(r.stamp))).toBe(true);
    const stamps = accepted.map((r) => r.stamp);

    // Every one-second window, through both transitions: at most 3 instances x 3/s.
    const fleetLimit = instances.length * rate;
    expect(crowdedWindows(accepted, fleetLimit, origin)).toEqual([]);
    expect(crowdedStamps(stamps, fleetLimit, JITTER_MS, wallOrigin)).toEqual([]);

    // Each instance stopped deciding alone soon after Redis was back. From then on, at most the
    // rate, shared: checked on every group of decisions during which no instance decided alone
    // (a call slower than REDIS_TIMEOUT_MS on this busy machine sends one to its fallback again).
    const changes = instances.map((instance) => modeChanges(instance).filter((change) => change.time >= killedAt));
    const backOn = changes.map((list) => list.find((change) => !change.alone && change.time >= backAt)?.time);
    expect(backOn.every((time) => time !== undefined && time - backAt < SETTLE_MS), `back on Redis after ${backOn.map((t) => (t === undefined ? 'never' : `${t - backAt} ms`))}`).toBe(true);
    const settledAt = Math.max(...backOn.map(Number));
    // Only searches sent after every instance was back: one decided alone just before it may be
    // stamped after it (its commit comes later), and would be counted as a shared decision.
    const shared = accepted
      .filter((r) => wallOrigin + (r.sent - origin) >= settledAt)
      .map((r) => r.stamp)
      .sort((a, b) => a - b);
    const crowdedShared: string[] = [];
    for (let i = 0; i + rate < shared.length; i++) {
      const [first, last] = [shared[i]!, shared[i + rate]!];
      if (changes.some((list) => aloneWithin(list, first, last))) continue;
      if (last - first < 1000 - JITTER_MS) crowdedShared.push(`${rate + 1} decided within ${last - first} ms from ${first - wallOrigin} ms`);
    }
    expect(crowdedShared).toEqual([]);

    // And the account was served all along: before, during and after the outage.
    expect(stamps.filter((stamp) => stamp < killedAt).length).toBeGreaterThanOrEqual(rate);
    expect(stamps.filter((stamp) => stamp > killedAt + 200 && stamp < backAt).length).toBeGreaterThanOrEqual(rate);
    expect(stamps.filter((stamp) => stamp >= settledAt).length).toBeGreaterThanOrEqual(2 * rate);
    await sharedLimitingOnEverywhere();
  }, 60_000);

  it('on SIGTERM an instance finishes what it has in flight, loses no count, and exits cleanly', async () => {
    const customer = await createCustomer(repos, { quota: 10_000, rate: 10_000 });
    const target = instances[2]!;
    const inFlight = Array.from({ length: 80 }, () =>
      send(customer, 2, vin).catch(() => ({ status: 0, instance: 2, body: null })),
    );
    await sleep(15);
    target.process.kill('SIGTERM');
    const outcomes = await Promise.all(inFlight);
    expect(await target.exited).toBe(0);
    const answered = outcomes.filter((o) => o.status === 200);
    // Every search the instance answered is stored, and nothing it did not answer was counted.
    expect(answered.length).toBeGreaterThan(0);
    expect(await repos.searches.countForAccount(customer.accountId)).toBe(answered.length);
    expect(outcomes.every((o) => [200, 503, 0].includes(o.status))).toBe(true);
    expect(target.logs.some((line) => line.includes('shut down cleanly'))).toBe(true);
  }, 30_000);
});
