import type { Readable } from 'node:stream';
import { CsvError, parse, type Info } from 'csv-parse';
import type { CsvRow, CsvRowsOptions } from './csv-row.ts';

export interface CsvParseRowsOptions extends CsvRowsOptions {
  /** Added to every line number: the input starts this many lines into the file. */
  lineOffset?: number;
}

interface Parsed {
  seq: number;
  record: string[];
  info: Info;
  raw: string;
}

interface Skipped {
  seq: number;
  error: CsvError;
  raw: string;
}

/** A record's own text: csv-parse's raw text also holds the empty lines before it and its line end. */
function recordText(raw: string): string {
  return raw.replace(/^[\r\n]+/, '').replace(/[\r\n]+$/, '');
}

/** The line a record starts on: csv-parse counts to where it ends, and a quoted field may span lines. */
function startLine(endLine: number, raw: string): number {
  const text = recordText(raw);
  let newlines = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) newlines++;
  return endLine - newlines;
}

/** Why a row with another number of columns than the header is not a row (both readers say it so). */
export function columnCountReason(got: number | undefined, headerWidth: number): string {
  return `has ${got ?? 'a different number of'} column${got === 1 ? '' : 's'}; the header has ${headerWidth}`;
}

/** Why csv-parse refused a record, in words for the skipped-rows report. */
export function csvErrorReason(error: CsvError, headerWidth: number): string {
  switch (error.code as string) {
    case 'CSV_RECORD_INCONSISTENT_FIELDS_LENGTH':
      return columnCountReason((error as CsvError & { record?: unknown[] }).record?.length, headerWidth);
    case 'CSV_INVALID_CLOSING_QUOTE':
      return 'a quoted field is followed by other text before the next delimiter';
    case 'INVALID_OPENING_QUOTE': {
      const column = (error as CsvError & { column?: unknown }).column;
      const field = typeof column === 'number' ? `field ${column + 1}` : 'a field';
      return `${field} has a quote inside it but does not start with one (quote the whole field and double the quotes inside)`;
    }
    default:
      // The row's line is reported beside the reason; csv-parse's own count is not the file's.
      return error.message.replace(/ at line \d+/, '');
  }
}

/**
 * readCsvRows (csv-rows.ts) through csv-parse, which knows every corner of the format: the reader
 * of any file, or of the rest of one, that the fast reader leaves to it.
 */
export async function* readCsvRowsWithCsvParse(input: Readable, options: CsvParseRowsOptions = {}): AsyncGenerator<CsvRow> {
  const offset = options.lineOffset ?? 0;
  let seq = 0;
  const skipped: Skipped[] = [];
  const parser = input.pipe(
    parse({
      bom: true,
      info: true,
      raw: true,
      relax_column_count: false,
      skip_empty_lines: true,
      skip_records_with_error: true,
      ...(options.delimiter ? { delimiter: options.delimiter } : {}),
      // Records and skipped rows reach this generator by different paths; a sequence number puts
      // the skipped ones back in file order.
      // (csv-parse types on_record for plain string[] records; with info and raw it receives and
      // may return objects, which is what the stream then yields.)
      on_record: (record: unknown) => ({ seq: seq++, ...(record as Omit<Parsed, 'seq'>) }) as unknown as string[],
      on_skip: (error: CsvError | undefined, raw: string | undefined) => {
        if (error) skipped.push({ seq: seq++, error, raw: raw ?? (error as CsvError & { raw?: string }).raw ?? '' });
      },
    }),
  );
  input.on('error', (error) => parser.destroy(error));
  let headerWidth = 0;
  let header = true;
  const drainSkipped = function* (before: number): Generator<CsvRow> {
    while (skipped.length > 0 && skipped[0]!.seq < before) {
      const { error, raw } = skipped.shift()!;
      const line = offset + startLine((error as CsvError & { lines?: number }).lines ?? 0, raw);
      yield { kind: 'bad', line, reason: csvErrorReason(error, headerWidth), source: recordText(raw) };
    }
  };
  try {
    for await (const parsed of parser as AsyncIterable<Parsed>) {
      yield* drainSkipped(parsed.seq);
      const line = offset + startLine(parsed.info.lines, parsed.raw);
      if (header) {
        header = false;
        headerWidth = parsed.record.length;
        yield { kind: 'header', line, values: parsed.record };
        continue;
      }
      yield { kind: 'row', line, values: parsed.record, source: recordText(parsed.raw) };
    }
  } finally {
    parser.destroy();
  }
  // What the parser refused at the very end says whether the file was cut.
  const last = skipped.at(-1);
  const truncated =
    last !== undefined &&
    (last.error.code === 'CSV_QUOTE_NOT_CLOSED' ||
      (last.error.code === 'CSV_RECORD_INCONSISTENT_FIELDS_LENGTH' && !/[\r\n]$/.test(last.raw)));
  if (truncated) skipped.pop();
  yield* drainSkipped(Number.POSITIVE_INFINITY);
  if (truncated) {
    const line = offset + startLine((last.error as CsvError & { lines?: number }).lines ?? 0, last.raw);
    throw new Error(
      last.error.code === 'CSV_QUOTE_NOT_CLOSED'
        ? `the file ends inside a quoted field opened on line ${line}: it is truncated (or a stray quote on that line swallowed the rest of the file)`
        : `the file ends in the middle of line ${line} (${csvErrorReason(last.error, headerWidth)}): it is truncated`,
    );
  }
}
