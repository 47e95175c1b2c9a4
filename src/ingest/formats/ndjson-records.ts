import type { Readable } from 'node:stream';
import { createInterface } from 'node:readline';
import type { SourceRecord } from '../sources/source-record.ts';

/**
 * Canonical NDJSON: one JSON object per line. Lines are read one at a time (readline pauses the
 * input while the consumer is busy, so memory stays flat in the file size); blank lines are
 * skipped but still counted, so that line numbers match what an editor shows. A read error of the
 * stream (missing file, bad gzip) is thrown from the iteration.
 */
export async function* readNdjsonRecords(input: Readable): AsyncGenerator<SourceRecord> {
  const lines = createInterface({ input, crlfDelay: Infinity });
  let line = 0;
  try {
    for await (let text of lines) {
      line++;
      // Editors on Windows save UTF-8 with a byte-order mark, which JSON.parse refuses.
      if (line === 1 && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      if (text.trim() === '') continue;
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch (error) {
        yield { line, error: `invalid JSON: ${(error as Error).message}`, source: text };
        continue;
      }
      if (value === null || typeof value !== 'object' || Array.isArray(value)) {
        yield { line, error: `expected a JSON object (one lot), got ${describeJsonType(value)}`, source: text };
        continue;
      }
      yield { line, raw: value, source: text };
    }
  } finally {
    lines.close();
  }
}

function describeJsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}
