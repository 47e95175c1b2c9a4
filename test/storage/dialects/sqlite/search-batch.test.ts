import BetterSqlite3 from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { SqliteSearchBatch } from '../../../../src/storage/dialects/sqlite/search-batch.ts';
import type { Step } from '../../../../src/storage/prepared-query.ts';
import type { CommitResult, SearchToCommit, SearchUnit } from '../../../../src/storage/search-commit.ts';

/**
 * The batch runs its units one after another with no savepoint each, and only when one throws
 * runs them again each in its own savepoint: whichever way, a unit that throws takes nothing of
 * its own with it and no other unit's writes. Units here write a row, then (when told to) throw,
 * on a real better-sqlite3 connection.
 */
describe('SqliteSearchBatch', () => {
  let raw: BetterSqlite3.Database;
  const insert = { sql: 'insert into written (name) values (?)', parameters: (params: Record<string, unknown>) => [params.name] } as unknown as Step['query'];
  let runs: string[];

  const unit = {
    *steps(input: SearchToCommit): Generator<Step, CommitResult, unknown[]> {
      runs.push(input.vin);
      yield { query: insert, params: { name: input.vin } };
      if (input.vin.startsWith('fail')) throw new Error(`unit ${input.vin} failed`);
      return { kind: 'principal_changed' };
    },
  } as unknown as SearchUnit;
  const search = (vin: string) => ({ vin }) as SearchToCommit;
  const written = () => (raw.prepare('select name from written order by name').all() as { name: string }[]).map((row) => row.name);

  beforeEach(() => {
    raw = new BetterSqlite3(':memory:');
    // As the product's connections: the searches file attached, the commit's rows written there.
    raw.exec("attach database ':memory:' as searches");
    raw.exec('create table searches.usage_counters (account_id text)');
    raw.exec('create table searches.written (name text not null)');
    runs = [];
  });
  afterEach(() => raw.close());

  test('units that do not throw commit together, each run once', () => {
    const outcomes = new SqliteSearchBatch(raw, unit, { waitForLock: false }).run([search('a'), search('b'), search('c')]);
    expect(outcomes.map((outcome) => outcome.ok)).toEqual([true, true, true]);
    expect(written()).toEqual(['a', 'b', 'c']);
    expect(runs).toEqual(['a', 'b', 'c']);
    expect(raw.inTransaction).toBe(false);
  });

  test('a unit that throws rolls back alone: the others commit, and its own row is gone', () => {
    const outcomes = new SqliteSearchBatch(raw, unit, { waitForLock: false }).run([search('a'), search('fail-b'), search('c')]);
    expect(outcomes.map((outcome) => outcome.ok)).toEqual([true, false, true]);
    const failed = outcomes[1]!;
    expect(failed.ok ? null : String(failed.error)).toContain('unit fail-b failed');
    expect(written()).toEqual(['a', 'c']);
    // The first pass stopped at the failing unit; the second ran every unit in its savepoint.
    expect(runs).toEqual(['a', 'fail-b', 'a', 'fail-b', 'c']);
  });

  test('a batch of one unit that throws writes nothing and is not run again', () => {
    for (const waitForLock of [false, true]) {
      runs = [];
      const outcomes = new SqliteSearchBatch(raw, unit, { waitForLock }).run([search('fail-x')]);
      expect(outcomes).toHaveLength(1);
      expect(outcomes[0]!.ok).toBe(false);
      expect(runs).toEqual(['fail-x']);
    }
    expect(written()).toEqual([]);
  });

  test('every unit throwing: each fails, nothing is written', () => {
    const outcomes = new SqliteSearchBatch(raw, unit, { waitForLock: true }).run([search('fail-1'), search('fail-2')]);
    expect(outcomes.map((outcome) => outcome.ok)).toEqual([false, false]);
    expect(written()).toEqual([]);
  });
});
