import { lotJson } from '../../../../src/domain/lot.ts';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from 'vitest';
import { migrateToLatest, openDatabase, type Db } from '../../../../src/storage/database.ts';
import type { PostgresStorageDialect } from '../../../../src/storage/dialects/postgres/index.ts';
import { PostgresSearchCommit } from '../../../../src/storage/dialects/postgres/search-commit.ts';
import { createRepositories, type Repositories } from '../../../../src/storage/repositories/index.ts';
import type { CommitResult, SearchCommit, SearchToCommit } from '../../../../src/storage/search-commit.ts';
import type { TokenPrincipal } from '../../../../src/domain/principal.ts';
import { newTestSchemaName } from '../../../support/databases.ts';
import { TEST_POSTGRES_URL } from '../../../support/env.ts';
import { createCustomer, makeLot, principalAt, type Customer } from '../../../support/fixtures.ts';
import { randomVin } from '../../repositories/helpers.ts';

const PERIOD = '2026-03-01T00:00:00.000Z';

const poolOf = (db: Db) => (db.dialect as PostgresStorageDialect).pool;

/** One "process": its own pool on the shared schema, and its own group commit. */
interface Instance {
  db: Db;
  repos: Repositories;
  searchCommit: PostgresSearchCommit;
}

/**
 * The search group commit on PostgreSQL, across two instances: two pools on one schema, each with
 * its own PostgresSearchCommit, as two server processes have. Their batches race for the same
 * accounts' counter rows and Idempotency-Keys.
 */
describe.runIf(TEST_POSTGRES_URL)('PostgresSearchCommit: group commit across two instances', () => {
  const instances: Instance[] = [];
  const schema = newTestSchemaName();
  beforeAll(async () => {
    for (let i = 0; i < 2; i++) {
      const db = await openDatabase({ kind: 'postgres', url: TEST_POSTGRES_URL! }, { schema, maxConnections: 8 });
      if (i === 0) await migrateToLatest(db);
      const repos = createRepositories(db);
      instances.push({ db, repos, searchCommit: repos.searchCommit as PostgresSearchCommit });
    }
  });
  afterAll(async () => {
    await Promise.all(instances.map((instance) => instance.db.close()));
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });

  const repos = () => instances[0]!.repos;

  /** The principal each customer's searches run for, read once: the searches of a test then reach their commit together. */
  const principals = new Map<string, Promise<TokenPrincipal>>();
  function principalOf(customer: Customer): Promise<TokenPrincipal> {
    if (!principals.has(customer.tokenId)) principals.set(customer.tokenId, principalAt(repos(), customer.tokenId, new Date()));
    return principals.get(customer.tokenId)!;
  }

  async function search(on: { searchCommit: SearchCommit }, customer: Customer, overrides: Partial<SearchToCommit> = {}): Promise<CommitResult> {
    const vin = overrides.vin ?? randomVin();
    return on.searchCommit.commit({
      principal: await principalOf(customer),
      now: new Date(),
      accountId: customer.accountId,
      tokenId: customer.tokenId,
      vin,
      periodStart: PERIOD,
      quota: 1000,
      lots: [lotJson(makeLot({ vin }))],
      idempotencyKey: null,
      ...overrides,
    });
  }

  function kinds(results: CommitResult[]): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const result of results) counts[result.kind] = (counts[result.kind] ?? 0) + 1;
    return counts;
  }

  async function ledger(customer: Customer) {
    return {
      searches: await repos().searches.countForAccount(customer.accountId),
      reports: await repos().reports.countForAccount(customer.accountId),
      used: await repos().usageCounters.usedInPeriod(customer.accountId, PERIOD),
    };
  }

  /** Counts the transactions an instance's search commits open from now on: each takes a pool connection (and nothing else does meanwhile). */
  function countTransactions(instance: Instance): { count: number } {
    const counter = { count: 0 };
    const pool = poolOf(instance.db);
    const original = pool.connect.bind(pool) as () => Promise<pg.PoolClient>;
    // eslint-disable-next-line @typescript-eslint/no-misused-promises -- the mock stands for connect's promise form; its callback form is never called here.
    vi.spyOn(pool, 'connect').mockImplementation((() => {
      counter.count++;
      return original();
    }) as typeof pool.connect);
    return counter;
  }

  test('80 searches at once from two instances against a quota of 25: exactly 25 counted, in far fewer transactions', async () => {
    const customer = await createCustomer(repos(), { quota: 25 });
    await principalOf(customer);
    const transactions = instances.map(countTransactions);
    const results = await Promise.all(Array.from({ length: 80 }, (_, i) => search(instances[i % 2]!, customer, { quota: 25 })));
    expect(kinds(results)).toEqual({ committed: 25, quota_exceeded: 55 });
    const counted = results.flatMap((r) => (r.kind === 'committed' ? [r.used] : [])).sort((a, b) => a - b);
    expect(counted).toEqual(Array.from({ length: 25 }, (_, i) => i + 1));
    for (const r of results) if (r.kind === 'quota_exceeded') expect(r.used).toBe(25);
    expect(await ledger(customer)).toEqual({ searches: 25, reports: 25, used: 25 });
    expect(transactions[0]!.count + transactions[1]!.count).toBeLessThan(40);
  });

  test('a search that fails inside its batch takes back its own writes only: its batch-mates commit with it', async () => {
    const customer = await createCustomer(repos());
    await principalOf(customer);
    const solo = new PostgresSearchCommit(instances[0]!.db.kysely, poolOf(instances[0]!.db), { maxInFlight: 1 });
    const transactions = countTransactions(instances[0]!);
    // The search record names a token that does not exist: its insert fails on the foreign key, after
    // the counter and the report were written in the same savepoint.
    const settled = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => search({ searchCommit: solo }, customer, i === 4 ? { tokenId: 'tok_missing' } : {})));
    expect(transactions.count).toBe(2);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled', 'fulfilled']);
    expect((settled[4] as PromiseRejectedResult).reason).toMatchObject({ code: '23503' });
    const counted = settled.flatMap((s) => (s.status === 'fulfilled' && s.value.kind === 'committed' ? [s.value.used] : [])).sort((a, b) => a - b);
    expect(counted).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(await ledger(customer)).toEqual({ searches: 7, reports: 7, used: 7 });
  });

  test('the same new Idempotency-Key from both instances at once: counted once, every other request replays it', async () => {
    const customer = await createCustomer(repos());
    const vin = randomVin();
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => search(instances[i % 2]!, customer, { vin, idempotencyKey: 'two-instances' })));
    expect(kinds(results)).toEqual({ committed: 1, replayed: 19 });
    const searchIds = new Set(results.map((r) => (r.kind === 'committed' || r.kind === 'replayed' ? r.search.searchId : r.kind)));
    expect(searchIds.size).toBe(1);
    expect(await ledger(customer)).toEqual({ searches: 1, reports: 1, used: 1 });
  });

  test('two accounts interleaved from two instances in opposite orders: no deadlock, every search counted', async () => {
    const [x, y] = await Promise.all([createCustomer(repos()), createCustomer(repos())]);
    await Promise.all([principalOf(x), principalOf(y)]);
    // One transaction in flight per instance, so that each batch holds searches of both accounts,
    // which arrive in one order at the first instance and in the other at the second.
    const [a, b] = instances.map((instance) => ({ searchCommit: new PostgresSearchCommit(instance.db.kysely, poolOf(instance.db), { maxInFlight: 1 }) }));
    const started = Date.now();
    const results = await Promise.all(
      Array.from({ length: 15 }, () => [
        search(a!, x),
        search(a!, y),
        search(b!, y),
        search(b!, x),
      ]).flat(),
    );
    expect(kinds(results)).toEqual({ committed: 60 });
    expect(await ledger(x)).toEqual({ searches: 30, reports: 30, used: 30 });
    expect(await ledger(y)).toEqual({ searches: 30, reports: 30, used: 30 });
    // A deadlock costs deadlock_timeout (1 s) before PostgreSQL breaks it by failing one search.
    expect(Date.now() - started).toBeLessThan(5000);
  });

  test("an account's counter row held past lock_timeout fails that account's searches of a batch in one wait, not one each; other accounts commit", async () => {
    const [x, y] = await Promise.all([createCustomer(repos()), createCustomer(repos())]);
    await Promise.all([principalOf(x), principalOf(y)]);
    await search(instances[0]!, x);
    const impatient = await openDatabase({ kind: 'postgres', url: TEST_POSTGRES_URL! }, { schema, lockTimeoutMs: 400 });
    const holder = new pg.Client({ connectionString: TEST_POSTGRES_URL!, options: `-c search_path=${schema}` });
    await holder.connect();
    try {
      await holder.query('begin');
      await holder.query('select used from usage_counters where account_id = $1 for update', [x.accountId]);
      const commits = { searchCommit: new PostgresSearchCommit(impatient.kysely, poolOf(impatient), { maxInFlight: 1 }) };
      const started = Date.now();
      // The first search goes alone; the other nine wait for it and make one batch.
      const settled = await Promise.allSettled([search(commits, y), ...Array.from({ length: 8 }, () => search(commits, x)), search(commits, y)]);
      const elapsed = Date.now() - started;
      expect(settled.map((s) => (s.status === 'fulfilled' ? s.value.kind : (s.reason as { code?: string }).code))).toEqual([
        'committed',
        ...Array(8).fill('55P03'),
        'committed',
      ]);
      // Each of the eight waiting its own 400 ms in turn would take 3.2 s.
      expect(elapsed).toBeLessThan(2000);
    } finally {
      await holder.query('rollback');
      await holder.end();
      await impatient.close();
    }
    expect(await ledger(x)).toEqual({ searches: 1, reports: 1, used: 1 });
    expect(await ledger(y)).toEqual({ searches: 2, reports: 2, used: 2 });
  });

  test('one batch item committed by both instances at once (a lease taken over from a stalled runner): counted once', async () => {
    const customer = await createCustomer(repos());
    await search(instances[0]!, customer);
    const vin = randomVin();
    const batchId = `bat_race_${Date.now()}`;
    await repos().batches.create({ id: batchId, accountId: customer.accountId, tokenId: customer.tokenId, items: [{ vin }], idempotencyKey: null, bodyHash: 'h', at: new Date().toISOString() });
    const batchItem = { batchId, index: 0, publicBaseUrl: 'https://api.example', notFoundMessage: 'nothing' };
    // The counter's row held, so that both read the item's row as pending before either writes it:
    // the one that writes second finds it answered, and its count and records roll back.
    const holder = new pg.Client({ connectionString: TEST_POSTGRES_URL!, options: `-c search_path=${schema}` });
    await holder.connect();
    let results: CommitResult[];
    try {
      await holder.query('begin');
      await holder.query('select used from usage_counters where account_id = $1 for update', [customer.accountId]);
      const both = Promise.all(instances.map((instance) => search(instance, customer, { vin, batchItem })));
      const waiting = `with recursive w(pid) as (
          select pid from pg_stat_activity where pg_backend_pid() = any(pg_blocking_pids(pid))
          union select a.pid from pg_stat_activity a join w on w.pid = any(pg_blocking_pids(a.pid))
        ) select count(*)::int as n from w`;
      for (let tries = 0; (await holder.query<{ n: number }>(waiting)).rows[0]!.n < 2; tries++) {
        if (tries > 500) throw new Error('the two commits never both waited for the counter');
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      await holder.query('commit');
      results = await both;
    } finally {
      await holder.query('rollback').catch(() => {});
      await holder.end();
    }
    expect(kinds(results)).toEqual({ committed: 1, item_done: 1 });
    expect(await ledger(customer)).toEqual({ searches: 2, reports: 2, used: 2 });
    const committed = results.find((r) => r.kind === 'committed');
    const [item] = await repos().batches.items(batchId, 0, 1);
    expect(item!.result?.reportId).toBe(committed?.kind === 'committed' ? committed.search.reportId : 'none');
  });
});
