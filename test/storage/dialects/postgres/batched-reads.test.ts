import { describe, expect, test } from 'vitest';
import { BatchedReads } from '../../../../src/storage/dialects/postgres/batched-reads.ts';

interface Row {
  key: string;
  n: number;
}

describe('BatchedReads', () => {
  const table: Row[] = [
    { key: 'a', n: 1 },
    { key: 'b', n: 2 },
    { key: 'a', n: 3 },
  ];

  function reads() {
    const statements: string[][] = [];
    const batched = new BatchedReads<Row>(async (keys) => {
      statements.push(keys);
      return table.filter((row) => keys.includes(row.key));
    }, (row) => row.key);
    return { batched, statements };
  }

  test('the reads of one turn of the event loop go in one statement, each answered with its own rows', async () => {
    const { batched, statements } = reads();
    const [a, b, none, again] = await Promise.all([batched.read('a'), batched.read('b'), batched.read('c'), batched.read('a')]);
    expect(statements).toEqual([['a', 'b', 'c']]);
    expect(a).toEqual([table[0], table[2]]);
    expect(b).toEqual([table[1]]);
    expect(none).toEqual([]);
    expect(again).toEqual(a);
    // Two reads of one key get arrays of their own.
    expect(again).not.toBe(a);
  });

  test('a read asked for after the statement went out goes in the next one', async () => {
    const { batched, statements } = reads();
    const first = batched.read('a');
    await new Promise((resolve) => setImmediate(resolve));
    const second = batched.read('b');
    await Promise.all([first, second]);
    expect(statements).toEqual([['a'], ['b']]);
  });

  test("a failed statement fails every read it carried, and only those", async () => {
    let fail = true;
    const batched = new BatchedReads<Row>(async (keys) => {
      if (fail) throw new Error('database down');
      return table.filter((row) => keys.includes(row.key));
    }, (row) => row.key);
    const settled = await Promise.allSettled([batched.read('a'), batched.read('b')]);
    expect(settled.map((s) => s.status)).toEqual(['rejected', 'rejected']);
    fail = false;
    await expect(batched.read('b')).resolves.toEqual([table[1]]);
  });
});
