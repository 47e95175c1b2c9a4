import { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { CsvError } from 'csv-parse';
import { parse as parseCsvSync } from 'csv-parse/sync';
import { columnCountReason, csvErrorReason, readCsvRowsWithCsvParse } from './csv-parse-rows.ts';
import type { CsvRow, CsvRowsOptions } from './csv-row.ts';
// A CSV record longer than this is a stray quote that swallowed the lines after it (Copart's rows are 600 bytes).
import { MAX_RECORD_CHARS } from '../record-limits.ts';

const QUOTE = 0x22;
const LF = 0x0a;
const CR = 0x0d;
/**
 * scanRecord's answers besides a position: the buffer ends before the record does, the record is
 * not plain (Scanned.textEnd then says where that shows), or the file ends inside a quoted field.
 */
const NEED_MORE = -1;
const NOT_PLAIN = -2;
const CUT = -3;

/** What scanRecord found besides where the record ends. */
interface Scanned {
  values: string[];
  /** Where the record's own text ends (before its line end). */
  textEnd: number;
  /** Whether a line end closed the record (not the end of the file). */
  terminated: boolean;
}

/**
 * Reads one record of plain CSV at `start`: fields separated by the delimiter, each either
 * unquoted without a quote in it, or quoted with doubled quotes inside and the delimiter or the
 * line end right after its closing quote; lines end in LF, or CRLF when `crlf`. (The caller also
 * leaves a record with a carriage return in its text to csv-parse.) Returns the position after
 * the record's line end, NEED_MORE when the buffer ends before the record does (and the file does
 * not), CUT when the file ends inside a quoted field, or NOT_PLAIN for anything else: those
 * records are csv-parse's to judge.
 */
function scanRecord(buf: string, start: number, delimiter: string, crlf: boolean, eof: boolean, out: Scanned): number {
  const d = delimiter.charCodeAt(0);
  const values: string[] = [];
  let i = start;
  let nl = buf.indexOf('\n', i);
  for (;;) {
    if (buf.charCodeAt(i) === QUOTE) {
      let from = i + 1;
      let value = '';
      for (;;) {
        const q = buf.indexOf('"', from);
        if (q === -1 || q + 1 === buf.length) {
          if (!eof) return NEED_MORE;
          if (q === -1) return CUT;
        } else if (buf.charCodeAt(q + 1) === QUOTE) {
          value += buf.slice(from, q + 1);
          from = q + 2;
          continue;
        }
        value += buf.slice(from, q);
        i = q + 1;
        break;
      }
      // A quoted line break: the line end is further on.
      if (nl !== -1 && nl < i) nl = buf.indexOf('\n', i);
      values.push(value);
      if (i === buf.length) {
        if (!eof) return NEED_MORE;
        return done(out, values, i, false, i);
      }
      const c = buf.charCodeAt(i);
      if (c === d) {
        i++;
        continue;
      }
      if (c === LF && !crlf) return done(out, values, i, true, i + 1);
      if (c === CR && crlf) {
        if (i + 1 === buf.length && !eof) return NEED_MORE;
        if (buf.charCodeAt(i + 1) === LF) return done(out, values, i, true, i + 2);
      }
      return notPlain(out, i);
    }
    if (nl === -1 && !eof) return NEED_MORE;
    const lineEnd = nl === -1 ? buf.length : nl;
    const next = buf.indexOf(delimiter, i);
    if (next !== -1 && next < lineEnd) {
      const value = buf.slice(i, next);
      if (value.includes('"')) return notPlain(out, i);
      values.push(value);
      i = next + 1;
      continue;
    }
    // The last field of the line.
    let textEnd = lineEnd;
    if (crlf && nl !== -1) {
      if (lineEnd - 1 < i || buf.charCodeAt(lineEnd - 1) !== CR) return notPlain(out, i);
      textEnd = lineEnd - 1;
    }
    const value = buf.slice(i, textEnd);
    if (value.includes('"')) return notPlain(out, i);
    values.push(value);
    return done(out, values, textEnd, nl !== -1, nl === -1 ? buf.length : nl + 1);
  }
}

function notPlain(out: Scanned, at: number): number {
  out.textEnd = at;
  return NOT_PLAIN;
}

function done(out: Scanned, values: string[], textEnd: number, terminated: boolean, end: number): number {
  out.values = values;
  out.textEnd = textEnd;
  out.terminated = terminated;
  return end;
}

/**
 * The rows of a CSV file: the header first, then each row with the line it starts on (as an editor
 * counts) and its text, or why it is not a row (another number of columns than the header, a broken
 * quote). Such a row is reported once and the next line read: a bad row never costs a good one.
 *
 * A file that ends in the middle of a row is truncated, and that is thrown after the rows before
 * it: an opening quote never closed, or a last row with another number of columns and no line end.
 *
 * Plain records (scanRecord) are read here with indexOf: csv-parse takes 30-50 µs for a row of
 * Copart's 59 quoted columns, more than storing the row takes, and this a ninth of that
 * (`npm run bench:csv-read`). csv-parse
 * judges every other record (a quote inside an unquoted field, text after a closing quote, a
 * carriage return inside a value), one at a time, and reads the whole file when its header is
 * not one plain line; a test holds both readers to the same rows on files they both read whole.
 */
export async function* readCsvRows(input: Readable, options: CsvRowsOptions = {}): AsyncGenerator<CsvRow> {
  const delimiter = options.delimiter ?? ',';
  if (delimiter.length !== 1 || delimiter === '"' || delimiter === '\n' || delimiter === '\r') {
    yield* readCsvRowsWithCsvParse(input, options);
    return;
  }
  const chunks = input[Symbol.asyncIterator]() as AsyncIterator<Buffer | string>;
  const decoder = new StringDecoder('utf8');
  let buf = '';
  let pos = 0;
  let eof = false;
  /** Appends the next chunk of the file to what is left of the buffer; false at the end of the file. */
  const more = async (): Promise<boolean> => {
    if (eof) return false;
    const next = await chunks.next();
    buf = buf.slice(pos);
    pos = 0;
    if (next.done) {
      eof = true;
      buf += decoder.end();
    } else buf += typeof next.value === 'string' ? next.value : decoder.write(next.value);
    return true;
  };

  try {
    // The first line decides the line end (a file without one in its first megabyte is csv-parse's).
    while (buf.indexOf('\n') === -1 && buf.length <= MAX_RECORD_CHARS && (await more()));
    if (buf.charCodeAt(0) === 0xfeff) pos = 1;
    const firstLf = buf.indexOf('\n');
    const crlf = firstLf > 0 && buf.charCodeAt(firstLf - 1) === CR;
    const lineEnd = crlf ? '\r\n' : '\n';
    let line = 1;
    const scanned: Scanned = { values: [], textEnd: 0, terminated: false };
    let header: { text: string; width: number } | null = null;
    /** Where the text of a line ending at the line feed `lf` ends: before its CR in a CRLF file. */
    const textEndAt = (lf: number) => (crlf && buf.charCodeAt(lf - 1) === CR ? lf - 1 : lf);

    for (;;) {
      if (pos >= buf.length) {
        if (await more()) continue;
        return;
      }
      // Empty lines are skipped, and counted.
      const c = buf.charCodeAt(pos);
      if (c === LF && !crlf) {
        pos++;
        line++;
        continue;
      }
      if (c === CR && crlf) {
        if (pos + 1 === buf.length && (await more())) continue;
        if (buf.charCodeAt(pos + 1) === LF) {
          pos += 2;
          line++;
          continue;
        }
      }

      let end = firstLf === -1 ? NOT_PLAIN : scanRecord(buf, pos, delimiter, crlf, eof, scanned);
      if (end === CUT) {
        throw truncatedInQuote(line);
      }
      let text = end >= 0 ? buf.slice(pos, scanned.textEnd) : '';
      if (header === null) {
        if (end === NEED_MORE && buf.length - pos <= MAX_RECORD_CHARS) {
          await more();
          continue;
        }
        if (end < 0 || !scanned.terminated || text.includes('\n') || text.includes('\r')) {
          // A header that is not one plain line: csv-parse reads the whole file.
          yield* readCsvRowsWithCsvParse(remainder(buf.slice(pos), chunks, decoder), { ...options, lineOffset: line - 1 });
          return;
        }
        header = { text, width: scanned.values.length };
        yield { kind: 'header', line, values: scanned.values };
        line++;
        pos = end;
        continue;
      }
      let reason: string | null = null;
      let wrongWidth = false;
      let values = scanned.values;
      if (end === NEED_MORE && buf.length - pos > MAX_RECORD_CHARS) {
        // A quote opened and not closed for a megabyte: the record is its first line, and bad.
        const lf = buf.indexOf('\n', pos);
        if (lf === -1) throw lineTooLong(line);
        end = lf + 1;
        text = buf.slice(pos, textEndAt(lf));
        scanned.terminated = true;
        reason = `a quoted field opened on this line is not closed within ${MAX_RECORD_CHARS} characters (a stray quote?)`;
      } else if (end === NEED_MORE) {
        await more();
        continue;
      } else if (end === NOT_PLAIN || text.includes('\r')) {
        if (end === NOT_PLAIN) {
          const lf = recordEnd(buf, scanned.textEnd, delimiter);
          if (lf < 0 && !eof) {
            if (buf.length - pos > MAX_RECORD_CHARS) throw lineTooLong(line);
            await more();
            continue;
          }
          if (lf === CUT) {
            throw truncatedInQuote(line);
          }
          end = lf < 0 ? buf.length : lf + 1;
          text = buf.slice(pos, lf < 0 ? buf.length : textEndAt(lf));
          scanned.terminated = lf >= 0;
        }
        const judged = judgeRecord(header, text, lineEnd, options);
        if ('reason' in judged) ({ reason, wrongWidth } = judged);
        else values = judged.values;
      }

      if (reason === null && values.length === header.width) {
        yield { kind: 'row', line, values, source: text };
      } else {
        if (reason === null) {
          reason = columnCountReason(values.length, header.width);
          wrongWidth = true;
        }
        // A last line with another number of columns and no line end is where the file was cut.
        if (wrongWidth && !scanned.terminated) throw new Error(`the file ends in the middle of line ${line} (${reason}): it is truncated`);
        yield { kind: 'bad', line, reason, source: text };
      }
      line += 1 + countLineFeeds(text);
      pos = end;
    }
  } finally {
    // Stopped early, or failed: let the file go.
    if (!eof) await chunks.return?.();
  }
}

/**
 * Where a record that is not plain ends (the position of its line feed), read the way csv-parse
 * reads with relax_quotes: from `from` (inside a field) a quote opens a quoted field only at the
 * start of a field, and anything else is text up to the next delimiter. So a stray quote (`5" tire`,
 * `"x" y`) spoils its own row and no other, and a quoted line break still belongs to its row.
 * NEED_MORE when the buffer ends first; at the end of the file, CUT inside a quoted field and
 * NEED_MORE elsewhere.
 */
function recordEnd(buf: string, from: number, delimiter: string): number {
  let i = from;
  for (;;) {
    const lf = buf.indexOf('\n', i);
    const next = buf.indexOf(delimiter, i);
    if (next === -1 || (lf !== -1 && lf < next)) return lf === -1 ? NEED_MORE : lf;
    i = next + 1;
    if (buf.charCodeAt(i) !== QUOTE) continue;
    for (let q = buf.indexOf('"', i + 1); ; q = buf.indexOf('"', q + 2)) {
      if (q === -1) return CUT;
      if (buf.charCodeAt(q + 1) !== QUOTE) {
        i = q + 1;
        break;
      }
    }
  }
}

function lineTooLong(line: number): Error {
  return new Error(`line ${line} is longer than ${MAX_RECORD_CHARS} characters: this is not a CSV of lots`);
}

function truncatedInQuote(line: number): Error {
  return new Error(
    `the file ends inside a quoted field opened on line ${line}: it is truncated (or a stray quote on that line swallowed the rest of the file)`,
  );
}

function countLineFeeds(text: string): number {
  let count = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) count++;
  return count;
}

/** What the buffer still holds and the rest of the file, as one stream of text for csv-parse. */
function remainder(head: string, chunks: AsyncIterator<Buffer | string>, decoder: StringDecoder): Readable {
  return Readable.from(
    (async function* () {
      yield head;
      for (;;) {
        const next = await chunks.next();
        if (next.done) break;
        yield typeof next.value === 'string' ? next.value : decoder.write(next.value);
      }
      yield decoder.end();
    })(),
    { objectMode: false },
  );
}

/** csv-parse's verdict on one record that is not plain, read under the file's header. */
function judgeRecord(
  header: { text: string; width: number },
  text: string,
  lineEnd: string,
  options: CsvRowsOptions,
): { values: string[] } | { reason: string; wrongWidth: boolean } {
  try {
    const records = parseCsvSync(header.text + lineEnd + text + lineEnd, {
      relax_column_count: false,
      skip_empty_lines: true,
      ...(options.delimiter ? { delimiter: options.delimiter } : {}),
    });
    if (records.length !== 2) return { reason: `holds ${records.length - 1} records`, wrongWidth: false };
    return { values: records[1]! };
  } catch (error) {
    if (!(error instanceof CsvError)) throw error;
    return { reason: csvErrorReason(error, header.width), wrongWidth: error.code === 'CSV_RECORD_INCONSISTENT_FIELDS_LENGTH' };
  }
}
