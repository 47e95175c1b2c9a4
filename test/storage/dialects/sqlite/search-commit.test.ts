import { mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { lotJson } from '../../../../src/domain/lot.ts';
import { migrateToLatest, openDatabase, type Db } from '../../../../src/storage/database.ts';
import { createRepositories, type Repositories } from '../../../../src/storage/repositories/index.ts';
import type { CommitResult, SearchToCommit } from '../../../../src/storage/search-commit.ts';
import { SqliteSearchCommitThread } from '../../../../src/storage/dialects/sqlite/search-commit-thread.ts';
import { createCustomer, makeLot, principalAt, type Customer } from '../../../support/fixtures.ts';
import { randomVin } from '../../repositories/helpers.ts';

const LOCK_TIMEOUT_MS = 400;

/**
 * The SQLite search commit, on the event loop (CLI, tests) or on a thread of its own (the server),
 * writes the searches file alone (searches-file.ts): it never waits for the main file's write lock
 * (a feed's pull, an import), and never waits for the searches file's on the event loop: while
 * another connection (a CLI writing that file, the checkpointer restarting its WAL) holds it,
 * timers and reads go on, and the searches commit once it is free, or fail with SQLITE_BUSY past
 * the lock timeout.
 */
describe.each([
  { where: 'on the event loop', searchCommitThread: false },
  { where: 'on its own thread', searchCommitThread: true },
])('the SQLite search commit $where', ({ searchCommitThread }) => {
  let dir: string;
  let db: Db;
  let repos: Repositories;
  /** Another connection with both files, as the product opens them. */
  let other: BetterSqlite3.Database;
  /** Another connection with the main file alone: BEGIN IMMEDIATE on it takes the main file's lock only. */
  let mainOnly: BetterSqlite3.Database;
  let customer: Customer;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'vinhistory-sqlite-commit-'));
    const file = path.join(dir, 'db.sqlite');
    db = await openDatabase({ kind: 'sqlite', file }, { lockTimeoutMs: LOCK_TIMEOUT_MS, searchCommitThread });
    await migrateToLatest(db);
    repos = createRepositories(db);
    customer = await createCustomer(repos);
    other = new BetterSqlite3(file);
    other.prepare('attach database ? as searches').run(path.join(dir, 'db-searches.sqlite'));
    mainOnly = new BetterSqlite3(file);
  });
  afterAll(async () => {
    other?.close();
    mainOnly?.close();
    await db?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function search(vin = randomVin()): Promise<SearchToCommit> {
    const now = new Date();
    const principal = await principalAt(repos, customer.tokenId, now);
    return {
      principal,
      accountId: customer.accountId,
      tokenId: customer.tokenId,
      vin,
      now,
      periodStart: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString(),
      quota: 1_000_000,
      lots: [lotJson(makeLot({ vin }))],
      idempotencyKey: null,
    };
  }

  test('commits while another connection holds the main file\'s write lock: no wait, no SQLITE_BUSY', async () => {
    const inputs = await Promise.all([search(), search(), search()]);
    // The thread started and its connection opened first (its start is not what is timed).
    expect((await repos.searchCommit.commit(await search())).kind).toBe('committed');
    const waitsBefore = db.dialect.searchCommitWaits()!;
    mainOnly.exec('begin immediate');
    let results: CommitResult[];
    try {
      const started = performance.now();
      results = await Promise.all(inputs.map((input) => repos.searchCommit.commit(input)));
      // Well within the lock timeout: the commits did not wait for the lock and give up.
      expect(performance.now() - started).toBeLessThan(LOCK_TIMEOUT_MS);
      // Answered while the main file's lock was still held.
      expect(mainOnly.inTransaction).toBe(true);
    } finally {
      mainOnly.exec('rollback');
    }
    for (const result of results) {
      if (result.kind !== 'committed') throw new Error(result.kind);
      expect(other.prepare('select vin from searches.searches where id = ?').pluck().get(result.search.searchId)).toBe(result.search.vin);
    }
    const waits = db.dialect.searchCommitWaits()!;
    expect(waits.commits).toBeGreaterThan(waitsBefore.commits);
    // None waited for a lock: nothing held the searches file.
    expect(waits.totalMs - waitsBefore.totalMs).toBeLessThan(LOCK_TIMEOUT_MS / 4);
  });

  test('a deferred search commit whose file another connection is writing waits for it and commits, never failing at once', async () => {
    const inputs = await Promise.all([search(), search()]);
    // A CLI's transaction on the searches file that has read it first, then writes.
    other.exec('begin');
    other.prepare('select count(*) from searches.searches').get();
    other.prepare('delete from searches.idempotency_keys where account_id = ?').run('acct_nobody');
    const commits = inputs.map((input) => repos.searchCommit.commit(input));
    await new Promise((resolve) => setTimeout(resolve, 30));
    other.exec('commit');
    for (const result of await Promise.all(commits)) expect(result.kind).toBe('committed');
  });

  test('waits on timers while the searches file\'s lock is held, reads go on, and the searches commit once it is free', async () => {
    const inputs = await Promise.all([search(), search(), search()]);
    // BEGIN IMMEDIATE takes every attached file's lock: the searches file's too.
    other.exec('begin immediate');
    let released = false;
    const commits = inputs.map((input) => repos.searchCommit.commit(input).then((result) => ({ result, afterRelease: released })));
    // The event loop is free while the commits wait: a timer fires and a read answers.
    const started = performance.now();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(performance.now() - started).toBeLessThan(45 + LOCK_TIMEOUT_MS / 2);
    expect(await repos.lots.findJsonByVin(inputs[0].vin)).toEqual({ lots: [], named: [] });
    other.exec('commit');
    released = true;
    const results = await Promise.all(commits);
    for (const { result, afterRelease } of results) {
      expect(result.kind).toBe('committed');
      expect(afterRelease).toBe(true);
    }
  });

  test('each search is committed, durably, before it is answered: another connection sees it at once', async () => {
    expect(repos.searchCommit.constructor.name).toBe(searchCommitThread ? 'SqliteSearchCommitThread' : 'SqliteSearchCommit');
    const input = await search();
    const result = await repos.searchCommit.commit(input);
    if (result.kind !== 'committed') throw new Error(result.kind);
    expect(result.search.lots).toEqual(input.lots);
    const row = other.prepare('select r.lots, s.vin from searches s join reports r on r.id = s.report_id where s.id = ?').get(result.search.searchId) as { lots: string; vin: string };
    expect(row).toEqual({ lots: `[${input.lots.join(',')}]`, vin: input.vin });
    const used = other.prepare('select used from usage_counters where account_id = ? and period_start = ?').pluck().get(customer.accountId, input.periodStart);
    expect(used).toBe(result.used);
  });

  test('many searches at once, in shared batches, count exactly up to the quota', async () => {
    const fresh = await createCustomer(repos);
    const now = new Date();
    const principal = await principalAt(repos, fresh.tokenId, now);
    const period = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString();
    const results = await Promise.all(
      Array.from({ length: 300 }, () =>
        repos.searchCommit.commit({ principal, accountId: fresh.accountId, tokenId: fresh.tokenId, vin: randomVin(), now, periodStart: period, quota: 200, lots: [], idempotencyKey: null }),
      ),
    );
    const kinds = results.reduce<Record<string, number>>((counts, result) => ({ ...counts, [result.kind]: (counts[result.kind] ?? 0) + 1 }), {});
    expect(kinds).toEqual({ committed: 200, quota_exceeded: 100 });
    expect(await repos.usageCounters.usedInPeriod(fresh.accountId, period)).toBe(200);
  });

  test('a search whose token was revoked since it was read writes nothing', async () => {
    const fresh = await createCustomer(repos);
    const now = new Date();
    const principal = await principalAt(repos, fresh.tokenId, now);
    await repos.tokens.revokeForAccount(fresh.accountId, fresh.tokenId);
    const period = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString();
    expect(await repos.searchCommit.commit({ principal, accountId: fresh.accountId, tokenId: fresh.tokenId, vin: randomVin(), now, periodStart: period, quota: 10, lots: [], idempotencyKey: null })).toEqual({ kind: 'principal_changed' });
    expect(await repos.usageCounters.usedInPeriod(fresh.accountId, period)).toBe(0);
  });

  test('past the lock timeout the waiting searches fail with SQLITE_BUSY; the next ones commit', async () => {
    other.exec('begin immediate');
    const started = performance.now();
    const failed = await repos.searchCommit.commit(await search()).then(
      () => null,
      (error: unknown) => error,
    );
    other.exec('commit');
    expect((failed as { code?: string } | null)?.code).toBe('SQLITE_BUSY');
    expect(performance.now() - started).toBeGreaterThanOrEqual(LOCK_TIMEOUT_MS - 5);
    expect((await repos.searchCommit.commit(await search())).kind).toBe('committed');
  });
});

describe('the SQLite search commit thread and its WAL', () => {
  test('restarts the WAL past its bound between batches, so that steady commits keep it bounded', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'vinhistory-commit-thread-wal-'));
    const file = path.join(dir, 'db.sqlite');
    const db = await openDatabase({ kind: 'sqlite', file });
    try {
      await migrateToLatest(db);
      const repos = createRepositories(db);
      const customer = await createCustomer(repos);
      const now = new Date();
      const principal = await principalAt(repos, customer.tokenId, now);
      const periodStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString();
      const walRestartBytes = 256 * 1024;
      // What the migrations and the set-up wrote is the WAL's start, not the commits' (it grows with
      // every migration): it is checkpointed away, so that the bound measured is the commits' alone.
      const searchesFile = path.join(dir, 'db-searches.sqlite');
      const setup = new BetterSqlite3(file);
      setup.prepare('attach database ? as searches').run(searchesFile);
      setup.pragma('wal_checkpoint(TRUNCATE)');
      setup.close();
      const thread = new SqliteSearchCommitThread({ file, lockTimeoutMs: 5000, walRestartBytes });
      let largest = 0;
      try {
        for (let round = 0; round < 40; round++) {
          const results = await Promise.all(
            Array.from({ length: 20 }, () => {
              const vin = randomVin();
              return thread.commit({ principal, accountId: customer.accountId, tokenId: customer.tokenId, vin, now, periodStart, quota: 1_000_000, lots: [lotJson(makeLot({ vin }))], idempotencyKey: null });
            }),
          );
          expect(results.every((result) => result.kind === 'committed')).toBe(true);
          // The commits write the searches file alone: its log is the one the thread restarts.
          largest = Math.max(largest, statSync(`${searchesFile}-wal`).size);
        }
      } finally {
        await thread.close();
      }
      // 800 searches write several MiB of WAL; restarted past 256 KiB, the file stays near that.
      expect(largest).toBeLessThan(walRestartBytes + 1024 * 1024);
      expect(await repos.usageCounters.usedInPeriod(customer.accountId, periodStart)).toBe(800);
    } finally {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
