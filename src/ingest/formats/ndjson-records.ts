import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { MAX_RECORD_CHARS, nestsTooDeep, TOO_DEEP_REASON, tooLongReason } from '../record-limits.ts';
import type { SourceRecord } from '../sources/source-record.ts';

/**
 * Canonical NDJSON: one JSON object per line. Lines are read one at a time (the input is pulled
 * only as the consumer asks, so memory stays flat in the file size); blank lines are skipped but
 * still counted, so that line numbers match what an editor shows. A line longer than
 * MAX_RECORD_CHARS is skipped as it streams past, never held whole, and a line nested deeper than
 * MAX_JSON_DEPTH is skipped before it is parsed: either costs its own line, and the next is read.
 * A read error of the stream (missing file, bad gzip) is thrown from the iteration.
 */
export async function* readNdjsonRecords(input: Readable): AsyncGenerator<SourceRecord> {
  let line = 0;
  for await (const item of splitLines(input)) {
    line++;
    if (typeof item === 'number') {
      yield { line, error: tooLongReason('line', item) };
      continue;
    }
    let text = item;
    // Editors on Windows save UTF-8 with a byte-order mark, which JSON.parse refuses.
    if (line === 1 && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    if (text.trim() === '') continue;
    if (nestsTooDeep(text)) {
      yield { line, error: TOO_DEEP_REASON, source: text };
      continue;
    }
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
}

const LF = 0x0a;

/**
 * The input's lines, ended by LF, CRLF or a lone CR (as readline ends them); a line longer than
 * MAX_RECORD_CHARS comes as its length instead of its text, having been dropped as it came.
 */
async function* splitLines(input: Readable): AsyncGenerator<string | number> {
  const decoder = new StringDecoder('utf8');
  let buf = '';
  /** Characters of an over-long line dropped so far, or -1 while the line is held. */
  let dropped = -1;
  /** The chunk before ended in CR: an LF starting this one belongs to that line end. */
  let afterCr = false;
  for await (const chunk of input as AsyncIterable<Buffer | string>) {
    const text = typeof chunk === 'string' ? chunk : decoder.write(chunk);
    let pos = afterCr && text.charCodeAt(0) === LF ? 1 : 0;
    afterCr = false;
    // A CR is rare (JSON escapes it inside strings): found once a chunk, not once a line.
    let cr = text.indexOf('\r', pos);
    for (;;) {
      if (cr !== -1 && cr < pos) cr = text.indexOf('\r', pos);
      const lf = text.indexOf('\n', pos);
      const end = cr === -1 ? lf : lf === -1 ? cr : Math.min(lf, cr);
      if (end === -1) break;
      if (dropped >= 0) {
        yield dropped + end - pos;
        dropped = -1;
      } else {
        const line = buf + text.slice(pos, end);
        buf = '';
        yield line.length > MAX_RECORD_CHARS ? line.length : line;
      }
      pos = end + 1;
      if (end === cr) {
        if (pos === text.length) afterCr = true;
        else if (text.charCodeAt(pos) === LF) pos++;
      }
    }
    const rest = text.length - pos;
    if (dropped >= 0) dropped += rest;
    else if (buf.length + rest > MAX_RECORD_CHARS) {
      dropped = buf.length + rest;
      buf = '';
    } else if (rest > 0) buf += text.slice(pos);
  }
  const last = decoder.end();
  if (dropped >= 0) yield dropped + last.length;
  else if (buf.length + last.length > 0) {
    const line = buf + last;
    yield line.length > MAX_RECORD_CHARS ? line.length : line;
  }
}

function describeJsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}
