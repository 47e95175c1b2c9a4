import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { openDatabase, type Db } from '../../../../src/storage/database.ts';
import { GroupCommit, type GroupCommitOptions, type UnitStep, type UnitSteps } from '../../../../src/storage/dialects/postgres/commits.ts';
import { newTestSchemaName } from '../../../support/databases.ts';
import { TEST_POSTGRES_URL } from '../../../support/env.ts';
import type { PostgresStorageDialect } from '../../../../src/storage/dialects/postgres/index.ts';

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
  /**
   * Reads the flag table first and writes `<id>-set` when its flag is there, `<id>-unset` when not
   * (besides `id`): the guess is "unset", so a set flag makes the statements sent ahead wrong.
   */
  flag?: string;
}

/** What a unit answers: the transaction (top-level id) and the connection it ran in, and when. */
interface Ran {
  id: string;
  txid: string;
  pid: number;
  /** The transaction's start, and the moment the unit ended (clock_timestamp), as epoch milliseconds. */
  started: number;
  ended: number;
}

class RetryMe extends Error {}

const statement = (sql: string) => ({ sql, parameters: (values: unknown[]) => values });
const INSERT = statement('insert into probe (id, token) values ($1, $2)');
const SLEEP = statement('select pg_sleep($1)');
const FLAG = statement('select name from flag where name = $1');
const WHO = statement(
  "select txid_current()::text as txid, pg_backend_pid() as pid, (extract(epoch from now()) * 1000)::float8 as started, (extract(epoch from clock_timestamp()) * 1000)::float8 as ended",
);
/** The rows the guesses give: a real run never sees this txid. */
const GUESSED = 'guessed';

/**
 * The generic PostgreSQL group commit, with units that write into a probe table of their own. A
 * unit reports the top-level transaction it ran in (txid_current() inside a savepoint is the
 * transaction's, not the savepoint's), which tells which units were committed together.
 */
describe.runIf(TEST_POSTGRES_URL)('GroupCommit on PostgreSQL', () => {
  let db: Db;
  /** Runs of each unit on real rows (a run on the guesses is no run). */
  const runs = new Map<string, number>();

  beforeAll(async () => {
    db = await openDatabase({ kind: 'postgres', url: TEST_POSTGRES_URL! }, { schema: newTestSchemaName(), maxConnections: 6 });
    await sql`create table probe (id text primary key, token text, constraint probe_token_unique unique (token) deferrable initially deferred)`.execute(db.kysely);
    await sql`create table flag (name text primary key)`.execute(db.kysely);
  });
  afterAll(async () => {
    await db?.close();
  });
  beforeEach(async () => {
    await sql`truncate probe, flag`.execute(db.kysely);
    runs.clear();
  });

  function unit(probe: Probe): UnitSteps<Ran> {
    return function* () {
      let flagged: string | null = null;
      if (probe.flag !== undefined) {
        const rows = yield { query: FLAG, params: [probe.flag] };
        flagged = rows.length > 0 ? 'set' : 'unset';
      }
      yield { query: INSERT, params: [probe.id, probe.token ?? null] };
      if (flagged !== null) yield { query: INSERT, params: [`${probe.id}-${flagged}`, null] };
      if (probe.sleep) yield { query: SLEEP, params: [probe.sleep] };
      if (probe.fail) throw new Error(`unit ${probe.id} fails`);
      const [who] = (yield { query: WHO, params: [] }) as Omit<Ran, 'id'>[];
      if (who!.txid !== GUESSED) {
        const run = (runs.get(probe.id) ?? 0) + 1;
        runs.set(probe.id, run);
        if (run <= (probe.failRuns ?? 0)) throw new RetryMe(`unit ${probe.id} fails on run ${run}`);
      }
      return { id: probe.id, ...who! };
    };
  }

  /** Every statement's common answer: no flag, nothing written back, and a marked WHO. */
  function guess(step: UnitStep): unknown[] | undefined {
    if (step.query === FLAG) return [];
    if (step.query === WHO) return [{ txid: GUESSED, pid: 0, started: 0, ended: 0 }];
    return [];
  }

  function groupCommit(options: Partial<GroupCommitOptions<Probe>> = {}): GroupCommit<Probe, Ran> {
    return new GroupCommit<Probe, Ran>((db.dialect as PostgresStorageDialect).pool, unit, {
      maxBatch: 32,
      maxInFlight: 1,
      lockKey: (probe) => probe.key ?? 'k',
      compare: () => 0,
      retry: (_probe, error) => error instanceof RetryMe,
      contended: () => false,
      guess,
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
    const commits = groupCommit({ compare: (a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0) });
    const ran = await Promise.all(['head', 'd', 'b', 'c', 'a'].map((id) => commits.commit({ id })));
    // clock_timestamp() at each unit's end: the later unit ends later.
    const order = ran.slice(1).sort((x, y) => x.ended - y.ended).map((r) => r.id);
    expect(order).toEqual(['a', 'b', 'c', 'd']);
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
    // a1, b1 and c1 each started a transaction at once, on three connections, and ran at the same time;
    // a2 and a3 waited for a1's to end and went together.
    expect(new Set(['a1', 'b1', 'c1'].map((id) => byId.get(id)!.pid)).size).toBe(3);
    const [a1, b1, c1, a2, a3] = ['a1', 'b1', 'c1', 'a2', 'a3'].map((id) => byId.get(id)!);
    expect(Math.max(a1!.started, b1!.started, c1!.started)).toBeLessThan(Math.min(a1!.ended, b1!.ended, c1!.ended));
    expect(a2!.txid).toBe(a3!.txid);
    expect(a2!.txid).not.toBe(a1!.txid);
    expect(a2!.started).toBeGreaterThanOrEqual(a1!.ended);
  });

  test('statements sent on a wrong guess never commit: the unit runs again on the real rows, and the units after it are sent again', async () => {
    await sql`insert into flag (name) values ('on')`.execute(db.kysely);
    const commits = groupCommit();
    const probes: Probe[] = [{ id: 'head' }, { id: 'u1', flag: 'off' }, { id: 'u2', flag: 'on' }, { id: 'u3', flag: 'off' }, { id: 'u4' }];
    const ran = await Promise.all(probes.map((probe) => commits.commit(probe)));
    expect(ran.map((r) => r.id)).toEqual(['head', 'u1', 'u2', 'u3', 'u4']);
    expect(new Set(ran.slice(1).map((r) => r.txid)).size).toBe(1);
    // u2's statements sent on the guess wrote u2-unset; only what its run on the real rows wrote is left.
    expect(await stored()).toEqual(['head', 'u1', 'u1-unset', 'u2', 'u2-set', 'u3', 'u3-unset', 'u4']);
    for (const id of ['u1', 'u2', 'u3', 'u4']) expect(runs.get(id)).toBe(1);
  });

  test('wrong guesses over and over: every unit still gets the answer of its real rows', async () => {
    await sql`insert into flag (name) values ('on')`.execute(db.kysely);
    const commits = groupCommit();
    const probes: Probe[] = [{ id: 'head' }, ...ids(8).map((id) => ({ id, flag: 'on' }))];
    const ran = await Promise.all(probes.map((probe) => commits.commit(probe)));
    expect(ran.map((r) => r.id)).toEqual(['head', ...ids(8)]);
    expect(await stored()).toEqual(['head', ...ids(8).flatMap((id) => [id, `${id}-set`])]);
  });
});
