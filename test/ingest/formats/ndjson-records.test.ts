import { PassThrough, Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { readNdjsonRecords } from '../../../src/ingest/formats/ndjson-records.ts';
import type { SourceRecord } from '../../../src/ingest/sources/source-record.ts';
import { MAX_JSON_DEPTH, MAX_RECORD_CHARS } from '../../../src/ingest/record-limits.ts';

async function collect(input: Readable): Promise<SourceRecord[]> {
  const records: SourceRecord[] = [];
  for await (const record of readNdjsonRecords(input)) records.push(record);
  return records;
}

describe('readNdjsonRecords', () => {
  it('yields one record per non-blank line, numbered as an editor numbers them', async () => {
    const records = await collect(Readable.from(['\uFEFF{"a":1}\r\n', '\n', '   \n{"b"', ':2}\n{"c":3}']));
    expect(records).toEqual([
      { line: 1, raw: { a: 1 }, source: '{"a":1}' },
      { line: 4, raw: { b: 2 }, source: '{"b":2}' },
      { line: 5, raw: { c: 3 }, source: '{"c":3}' },
    ]);
  });

  it('reports lines that are not JSON objects and carries on', async () => {
    const records = await collect(Readable.from(['{oops\n', '[1]\n', '"text"\n', 'null\n', '{"ok":true}\n']));
    expect(records).toEqual([
      { line: 1, error: expect.stringMatching(/^invalid JSON: /), source: '{oops' },
      { line: 2, error: 'expected a JSON object (one lot), got an array', source: '[1]' },
      { line: 3, error: 'expected a JSON object (one lot), got a string', source: '"text"' },
      { line: 4, error: 'expected a JSON object (one lot), got null', source: 'null' },
      { line: 5, raw: { ok: true }, source: '{"ok":true}' },
    ]);
  });

  it('throws the read error of the stream after the lines read before it', async () => {
    const input = new PassThrough();
    input.write('{"a":1}\n');
    const seen: SourceRecord[] = [];
    const reading = (async () => {
      for await (const record of readNdjsonRecords(input)) {
        seen.push(record);
        input.destroy(new Error('disk on fire'));
      }
    })();
    await expect(reading).rejects.toThrow('disk on fire');
    expect(seen).toEqual([{ line: 1, raw: { a: 1 }, source: '{"a":1}' }]);
  });

  it('skips a line longer than the record cap without holding it, and reads the next', async () => {
    const long = `{"a":"${'x'.repeat(MAX_RECORD_CHARS)}"}`;
    const chunks = ['{"a":1}\n'];
    for (let i = 0; i < long.length; i += 64 * 1024) chunks.push(long.slice(i, i + 64 * 1024));
    chunks.push('\r\n{"b":2}\n');
    const records = await collect(Readable.from(chunks));
    expect(records).toEqual([
      { line: 1, raw: { a: 1 }, source: '{"a":1}' },
      { line: 2, error: `the line is longer than ${MAX_RECORD_CHARS} characters (${long.length}): not one lot` },
      { line: 3, raw: { b: 2 }, source: '{"b":2}' },
    ]);
  });

  it('skips a line nested deeper than the limit before parsing it, and reads the next', async () => {
    const deep = `{"a":${'['.repeat(20_000)}${']'.repeat(20_000)}}`;
    const fine = `{"a":${'['.repeat(MAX_JSON_DEPTH - 1)}"[[[["${']'.repeat(MAX_JSON_DEPTH - 1)}}`;
    const records = await collect(Readable.from([`${deep}\n${fine}\n{"b":2}\n`]));
    expect(records[0]).toEqual({ line: 1, error: `the record is nested more than ${MAX_JSON_DEPTH} levels deep: not one lot`, source: deep });
    expect(records[1]).toMatchObject({ line: 2, source: fine });
    expect(records[1]).toHaveProperty('raw');
    expect(records[2]).toEqual({ line: 3, raw: { b: 2 }, source: '{"b":2}' });
  });

  it('ends a line at LF, CRLF or a lone CR, as readline did', async () => {
    const records = await collect(Readable.from(['{"a":1}\r', '\n{"b":2}\r{"c":3}\r\n', '{"d":4}']));
    expect(records.map((record) => record.line)).toEqual([1, 2, 3, 4]);
  });
});
