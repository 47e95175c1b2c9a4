import { sql } from 'kysely';
import type pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { openDatabase, type Db } from '../../../../src/storage/database.ts';
import { GroupCommit, type GroupCommitOptions } from '../../../../src/storage/dialects/postgres/commits.ts';
import { newTestSchemaName } from '../../../support/databases.ts';
import { TEST_POSTGRES_URL } from '../../../support/env.ts';

/** What a unit is asked to do: write `id` into the probe table under lock key `key`, and perhaps fail. */
interface Probe {
  id: string;
  key?: string;
  /** Throws after its write: the savepoint must take the write back. */
  fail?: boolean;
  /** Fails this many runs with a retryable error before it succeeds. */
  failRuns?: number;
  /** Written into the deferred-unique column: two equal ones in a transaction fail its COMMIT. */
  token?: string;
  /** Seconds the unit sleeps in the database, to hold its transaction open. */
  sleep?: number;
}

/** What a unit answers: the transaction (top-level id) and the connection it ran in. */
interface Ran {
  id: string;
  txid: string;
  pid: number;
}

class RetryMe extends Error {}

/**
 * The generic PostgreSQL group commit, with units that write into a probe table of their own. A
 * unit reports the top-level transaction it ran in (txid_current() inside a savepoint is the
 * transaction's, not the savepoint's), which tells which units were committed together.
 */
describe.runIf(TEST_POSTGRES_URL)('GroupCommit on PostgreSQL', () => {
  let db: Db;
  const runs = new Map<string, number>();
  let active = new Map<string, number>();
  let overlaps: string[][] = [];

  beforeAll(async () => {
    db = await openDatabase({ kind: 'postgres', url: TEST_POSTGRES_URL! }, { schema: newTestSchemaName(), maxConnections: 6 });
    await sql`create table probe (id text primary key, token text, constraint probe_token_unique unique (token) deferrable initially deferred)`.execute(db.kysely);
  });
  afterAll(async () => {
    await db?.close();
  });
  beforeEach(async () => {
    await sql`truncate probe`.execute(db.kysely);
    runs.clear();
    active = new Map();
    overlaps = [];
  });

  async function work(client: pg.ClientBase, probe: Probe): Promise<Ran> {
    const key = probe.key ?? 'k';
    active.set(key, (active.get(key) ?? 0) + 1);
    overlaps.push([...active].flatMap(([k, n]) => Array.from({ length: n }, () => k)).sort());
    try {
      const run = (runs.get(probe.id) ?? 0) + 1;
      runs.set(probe.id, run);
      await client.query('insert into probe (id, token) values ($1, $2)', [probe.id, probe.token ?? null]);
      if (probe.sleep) await client.query('select pg_sleep($1)', [probe.sleep]);
      if (probe.fail) throw new Error(`unit ${probe.id} fails`);
      if (run <= (probe.failRuns ?? 0)) throw new RetryMe(`unit ${probe.id} fails on run ${run}`);
      const { rows } = await client.query<{ txid: string; pid: number }>('select txid_current()::text as txid, pg_backend_pid() as pid');
      return { id: probe.id, ...rows[0]! };
    } finally {
      active.set(key, active.get(key)! - 1);
    }
  }

  function groupCommit(options: Partial<GroupCommitOptions<Probe>> = {}): GroupCommit<Probe, Ran> {
    return new GroupCommit<Probe, Ran>(db.postgres!, work, {
      maxBatch: 32,
      maxInFlight: 1,
      lockKey: (probe) => probe.key ?? 'k',
      compare: () => 0,
      retry: (_probe, error) => error instanceof RetryMe,
      contended: () => false,
      ...options,
    });
  }

  async function stored(): Promise<string[]> {
    const { rows } = await sql<{ id: string }>`select id from probe order by id`.execute(db.kysely);
    return rows.map((row) => row.id);
  }

  const ids = (n: number, prefix = 'u') => Array.from({ length: n }, (_, i) => `${prefix}${String(i).padStart(2, '0')}`);

  test('units that arrive while a transaction is in flight commit together in the next one', async () => {
    const commits = groupCommit();
    const [first, ...rest] = await Promise.all(ids(11).map((id) => commits.commit({ id })));
    expect(new Set(rest.map((ran) => ran.txid)).size).toBe(1);
    expect(rest[0]!.txid).not.toBe(first!.txid);
    expect(await stored()).toEqual(ids(11));
  });

  test('a batch is no larger than maxBatch', async () => {
    const commits = groupCommit({ maxBatch: 4 });
    const [, ...rest] = await Promise.all(ids(13).map((id) => commits.commit({ id })));
    const sizes = [...new Set(rest.map((ran) => ran.txid))].map((txid) => rest.filter((ran) => ran.txid === txid).length);
    expect(sizes).toEqual([4, 4, 4]);
  });

  test('a unit that fails is rolled back alone: its batch-mates commit in the same transaction', async () => {
    const commits = groupCommit();
    const probes: Probe[] = ids(6).map((id) => ({ id, fail: id === 'u03' }));
    const settled = await Promise.allSettled(probes.map((probe) => commits.commit(probe)));
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    expect((settled[3] as PromiseRejectedResult).reason).toEqual(new Error('unit u03 fails'));
    const mates = settled.slice(1).flatMap((s) => (s.status === 'fulfilled' ? [s.value.txid] : []));
    expect(new Set(mates).size).toBe(1);
    expect(await stored()).toEqual(['u00', 'u01', 'u02', 'u04', 'u05']);
  });

  test('a unit whose error says "retry" runs once more in its batch, its first run taken back; a second failure is its answer', async () => {
    const commits = groupCommit();
    const settled = await Promise.allSettled([
      commits.commit({ id: 'head' }),
      commits.commit({ id: 'a' }),
      commits.commit({ id: 'once', failRuns: 1 }),
      commits.commit({ id: 'twice', failRuns: 2 }),
      commits.commit({ id: 'z' }),
    ]);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect(runs.get('once')).toBe(2);
    expect(runs.get('twice')).toBe(2);
    expect(await stored()).toEqual(['a', 'head', 'once', 'z']);
  });

  test('a unit alone in its transaction runs once more when its error says "retry", its first run taken back', async () => {
    const commits = groupCommit();
    const ran = await commits.commit({ id: 'alone', failRuns: 1 });
    expect(ran.id).toBe('alone');
    expect(runs.get('alone')).toBe(2);
    expect(await stored()).toEqual(['alone']);
  });

  test('a failed COMMIT rejects every unit of its batch, and answers come only after it', async () => {
    const commits = groupCommit();
    // The deferred unique constraint is checked at COMMIT: two units of one batch with the same token fail it.
    const settled = await Promise.allSettled([
      commits.commit({ id: 'head' }),
      commits.commit({ id: 'a', token: 'same' }),
      commits.commit({ id: 'b' }),
      commits.commit({ id: 'c', token: 'same' }),
    ]);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'rejected']);
    for (const s of settled.slice(1)) expect((s as PromiseRejectedResult).reason).toMatchObject({ code: '23505', constraint: 'probe_token_unique' });
    expect(await stored()).toEqual(['head']);
    // The connection went back to the pool usable: the next batch commits.
    await expect(commits.commit({ id: 'after' })).resolves.toMatchObject({ id: 'after' });
  });

  test('units run in a batch in the order `compare` gives', async () => {
    const order: string[] = [];
    const commits = new GroupCommit<Probe, string>(
      db.postgres!,
      async (client, probe) => {
        order.push(probe.id);
        return (await work(client, probe)).txid;
      },
      { maxBatch: 32, maxInFlight: 1, lockKey: () => 'k', compare: (a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0), retry: () => false, contended: () => false },
    );
    await Promise.all(['head', 'd', 'b', 'c', 'a'].map((id) => commits.commit({ id })));
    expect(order).toEqual(['head', 'a', 'b', 'c', 'd']);
  });

  test('batches run side by side, but never two with the same lock key', async () => {
    const commits = groupCommit({ maxInFlight: 3 });
    const probes: Probe[] = [
      { id: 'a1', key: 'a', sleep: 0.2 },
      { id: 'a2', key: 'a', sleep: 0.05 },
      { id: 'b1', key: 'b', sleep: 0.2 },
      { id: 'a3', key: 'a', sleep: 0.05 },
      { id: 'c1', key: 'c', sleep: 0.2 },
    ];
    const ran = await Promise.all(probes.map((probe) => commits.commit(probe)));
    const byId = new Map(ran.map((r) => [r.id, r]));
    // a1, b1 and c1 each started a transaction at once, on three connections; a2 and a3 waited for a1's and went together.
    expect(new Set(['a1', 'b1', 'c1'].map((id) => byId.get(id)!.pid)).size).toBe(3);
    expect(byId.get('a2')!.txid).toBe(byId.get('a3')!.txid);
    expect(byId.get('a2')!.txid).not.toBe(byId.get('a1')!.txid);
    expect(overlaps.some((keys) => keys.join() === 'a,b,c')).toBe(true);
    expect(overlaps.every((keys) => keys.filter((k) => k === 'a').length <= 1)).toBe(true);
  });
});
