import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { MAX_JSON_DEPTH, MAX_RECORD_CHARS, TOO_DEEP_REASON, tooLongReason } from '../record-limits.ts';

export type JsonValueText = { line: number; text: string } | { line: number; error: string };

const enum Char {
  Newline = 10,
  Quote = 34,
  Comma = 44,
  Backslash = 92,
  OpenBracket = 91,
  CloseBracket = 93,
  OpenBrace = 123,
  CloseBrace = 125,
}

const isSpace = (c: number) => c === 32 || c === 9 || c === 10 || c === 13;

/**
 * Splits a JSON file into its records without parsing the whole file: the elements of a top-level
 * array (`[{...}, {...}]`), or a sequence of top-level values (one object, NDJSON, pretty-printed
 * objects one after another). Memory holds one record at a time, whatever the file size.
 *
 * Only the structure is tracked (strings with their escapes, and bracket depth), which is all it
 * takes to find where a record ends; each record's text is then parsed by JSON.parse, so a broken
 * record is reported on its own line and the next one is still read. A file that ends inside a
 * record, or before its array is closed, is truncated: that is thrown after the complete records.
 *
 * A record longer than MAX_RECORD_CHARS, or nested deeper than MAX_JSON_DEPTH, is reported in
 * place of its text (which is dropped as it streams past, never held whole or parsed), and the
 * next record is read.
 */
export async function* splitJsonValues(input: Readable): AsyncGenerator<JsonValueText> {
  const decoder = new StringDecoder('utf8');
  let mode: 'start' | 'array' | 'values' | 'after-array' = 'start';
  let expectComma = false;
  let line = 1;
  let first = true;
  // The record being read: where it began, its text so far, and the scanner's state inside it.
  let recording = false;
  let recordLine = 0;
  let pieces: string[] = [];
  /** Characters of the record so far; past MAX_RECORD_CHARS its pieces are dropped. */
  let recordChars = 0;
  let tooDeep = false;
  let depth = 0;
  let inString = false;
  let escaped = false;
  let primitive = false;

  for await (const chunk of input as AsyncIterable<Buffer | string>) {
    let text = typeof chunk === 'string' ? chunk : decoder.write(chunk);
    if (first && text.length > 0) {
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      first = false;
    }
    let segmentStart = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (recording) {
        if (inString) {
          if (escaped) escaped = false;
          else if (c === Char.Backslash) escaped = true;
          else if (c === Char.Quote) {
            inString = false;
            if (depth === 0) {
              yield finish(i + 1);
              continue;
            }
          } else if (c === Char.Newline) line++;
          continue;
        }
        if (primitive) {
          // A number, true, false or null ends at the first character that cannot be part of it.
          if (!(isSpace(c) || c === Char.Comma || c === Char.CloseBracket || c === Char.CloseBrace)) continue;
          yield finish(i);
          // Not consumed: the delimiter is handled below, between records.
        } else {
          if (c === Char.Quote) inString = true;
          else if (c === Char.OpenBrace || c === Char.OpenBracket) {
            if (++depth > MAX_JSON_DEPTH) tooDeep = true;
          } else if (c === Char.CloseBrace || c === Char.CloseBracket) {
            depth--;
            if (depth === 0) yield finish(i + 1);
          } else if (c === Char.Newline) line++;
          continue;
        }
      }
      // Between records.
      if (isSpace(c)) {
        if (c === Char.Newline) line++;
        continue;
      }
      if (mode === 'start') {
        if (c === Char.OpenBracket) {
          mode = 'array';
          continue;
        }
        mode = 'values';
      }
      if (mode === 'after-array') throw new Error(`unexpected text after the end of the JSON array, on line ${line}`);
      if (mode === 'array') {
        if (c === Char.CloseBracket) {
          mode = 'after-array';
          expectComma = false;
          continue;
        }
        if (expectComma) {
          if (c === Char.Comma) {
            expectComma = false;
            continue;
          }
          throw new Error(`expected "," or "]" between the records of the JSON array, on line ${line}`);
        }
      } else if (c === Char.Comma) {
        yield { line, error: 'unexpected "," between records (a JSON array must start with "[")' };
        continue;
      }
      // A record starts here.
      recording = true;
      recordLine = line;
      pieces = [];
      recordChars = 0;
      tooDeep = false;
      segmentStart = i;
      depth = 0;
      escaped = false;
      inString = c === Char.Quote;
      primitive = !(inString || c === Char.OpenBrace || c === Char.OpenBracket);
      if (c === Char.OpenBrace || c === Char.OpenBracket) depth = 1;
    }
    if (recording) keep(text.slice(segmentStart));

    function finish(end: number): JsonValueText {
      keep(text.slice(segmentStart, end));
      const record = recorded();
      recording = false;
      pieces = [];
      primitive = false;
      segmentStart = end;
      if (mode === 'array') expectComma = true;
      return record;
    }
  }
  const rest = decoder.end();
  if (rest.length > 0 && recording) keep(rest);
  if (recording && primitive) {
    yield recorded();
    recording = false;
  }
  if (recording) throw new Error(`the file ends inside the record that starts on line ${recordLine}: it is truncated`);
  if (mode === 'array') throw new Error('the file ends before the JSON array is closed (no "]"): it is truncated');

  /** Adds a piece of the record's text, or only counts it once the record is past a bound. */
  function keep(piece: string): void {
    recordChars += piece.length;
    if (recordChars > MAX_RECORD_CHARS || tooDeep) pieces = [];
    else pieces.push(piece);
  }

  /** The record read, or why it is skipped. */
  function recorded(): JsonValueText {
    if (recordChars > MAX_RECORD_CHARS) return { line: recordLine, error: tooLongReason('record', recordChars) };
    if (tooDeep) return { line: recordLine, error: TOO_DEEP_REASON };
    return { line: recordLine, text: pieces.join('') };
  }
}
