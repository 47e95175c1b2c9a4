import { PassThrough, Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { readNdjsonRecords } from '../../../src/ingest/formats/ndjson-records.ts';
import type { SourceRecord } from '../../../src/ingest/sources/source-record.ts';

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
});
