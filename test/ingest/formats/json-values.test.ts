import { describe, expect, it } from 'vitest';
import { splitJsonValues, type JsonValueText } from '../../../src/ingest/formats/json-values.ts';
import { MAX_JSON_DEPTH, MAX_RECORD_CHARS } from '../../../src/ingest/record-limits.ts';
import { streamOf } from '../helpers.ts';

async function split(text: string, chunkSize = 0): Promise<{ values: JsonValueText[]; failure: string | null }> {
  const values: JsonValueText[] = [];
  try {
    for await (const value of splitJsonValues(streamOf(text, chunkSize))) values.push(value);
  } catch (error) {
    return { values, failure: (error as Error).message };
  }
  return { values, failure: null };
}

const TRICKY = `[
  {"a": "}]{[", "b": "quote \\" and backslash \\\\"},
  {"nested": {"list": [1, {"x": "y"}]},
   "multi": "line"},
  "a string",
  42, true, null,
  {"utf8": "Škoda — ü"}
]
`;

describe('splitJsonValues', () => {
  it('splits a top-level array into its elements, with the line each starts on, at any chunk size', async () => {
    const expected = [
      { line: 2, text: '{"a": "}]{[", "b": "quote \\" and backslash \\\\"}' },
      { line: 3, text: '{"nested": {"list": [1, {"x": "y"}]},\n   "multi": "line"}' },
      { line: 5, text: '"a string"' },
      { line: 6, text: '42' },
      { line: 6, text: 'true' },
      { line: 6, text: 'null' },
      { line: 7, text: '{"utf8": "Škoda — ü"}' },
    ];
    for (const size of [0, 1, 2, 3, 7, 64]) {
      expect(await split(TRICKY, size), `chunks of ${size}`).toEqual({ values: expected, failure: null });
    }
  });

  it('splits a sequence of values: NDJSON, pretty-printed objects, one object', async () => {
    expect(await split('\uFEFF{"a":1}\n{"b":\n  2}\n\n{"c":3}')).toEqual({
      values: [
        { line: 1, text: '{"a":1}' },
        { line: 2, text: '{"b":\n  2}' },
        { line: 5, text: '{"c":3}' },
      ],
      failure: null,
    });
    expect(await split('  {\n  "only": true\n}\n')).toEqual({ values: [{ line: 1, text: '{\n  "only": true\n}' }], failure: null });
  });

  it('says a file is truncated when it ends inside a record or before the array closes', async () => {
    expect(await split('[{"a":1},\n{"b": "cut')).toEqual({
      values: [{ line: 1, text: '{"a":1}' }],
      failure: 'the file ends inside the record that starts on line 2: it is truncated',
    });
    expect(await split('[{"a":1},\n{"b":2}')).toEqual({
      values: [
        { line: 1, text: '{"a":1}' },
        { line: 2, text: '{"b":2}' },
      ],
      failure: 'the file ends before the JSON array is closed (no "]"): it is truncated',
    });
    expect((await split('{"a":1}\n{"b":')).failure).toBe('the file ends inside the record that starts on line 2: it is truncated');
  });

  it('refuses what cannot be a JSON file of records', async () => {
    expect((await split('[{"a":1} {"b":2}]')).failure).toBe('expected "," or "]" between the records of the JSON array, on line 1');
    expect((await split('[{"a":1}]\n{"b":2}')).failure).toBe('unexpected text after the end of the JSON array, on line 2');
    expect(await split('{"a":1},\n{"b":2}')).toEqual({
      values: [
        { line: 1, text: '{"a":1}' },
        { line: 1, error: 'unexpected "," between records (a JSON array must start with "[")' },
        { line: 2, text: '{"b":2}' },
      ],
      failure: null,
    });
  });

  it('reads an empty array as no records', async () => {
    expect(await split('[ ]\n')).toEqual({ values: [], failure: null });
  });

  it('skips a record nested deeper than the limit, and reads the next, at any chunk size', async () => {
    const deep = `{"a":${'['.repeat(20_000)}${']'.repeat(20_000)}}`;
    for (const chunkSize of [0, 1000]) {
      const { values, failure } = await split(`[${deep},\n{"b":2}]`, chunkSize);
      expect(failure).toBeNull();
      expect(values).toEqual([
        { line: 1, error: `the record is nested more than ${MAX_JSON_DEPTH} levels deep: not one lot` },
        { line: 2, text: '{"b":2}' },
      ]);
    }
  });

  it('skips a record longer than the cap without holding it, and reads the next', async () => {
    const long = `{"a":"${'x'.repeat(MAX_RECORD_CHARS)}"}`;
    const { values, failure } = await split(`[{"a":1},\n${long},\n{"b":2}]`, 64 * 1024);
    expect(failure).toBeNull();
    expect(values).toEqual([
      { line: 1, text: '{"a":1}' },
      { line: 2, error: `the record is longer than ${MAX_RECORD_CHARS} characters (${long.length}): not one lot` },
      { line: 3, text: '{"b":2}' },
    ]);
  });
});
