import { describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH, nestsTooDeep } from '../../src/ingest/record-limits.ts';

const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

describe('nestsTooDeep', () => {
  it('counts the nesting of objects and arrays up to the limit, and past it', () => {
    expect(nestsTooDeep(`{"a":${nested(MAX_JSON_DEPTH - 1)}}`)).toBe(false);
    expect(nestsTooDeep(`{"a":${nested(MAX_JSON_DEPTH)}}`)).toBe(true);
    expect(nestsTooDeep(`{"a":${'{"b":'.repeat(MAX_JSON_DEPTH)}1${'}'.repeat(MAX_JSON_DEPTH)}}`)).toBe(true);
  });

  it('ignores brackets inside strings, escaped quotes included, and many brackets side by side', () => {
    const inString = JSON.stringify({ a: `\\"${'['.repeat(500)}`, b: '\\', c: '{'.repeat(500) });
    expect(nestsTooDeep(inString)).toBe(false);
    expect(nestsTooDeep(`[${Array.from({ length: 500 }, () => '[{}]').join(',')}]`)).toBe(false);
    expect(nestsTooDeep(`{"a":"\\\\",${'"x":'}${nested(MAX_JSON_DEPTH + 1)}}`)).toBe(true);
  });
});
