import type { Readable } from 'node:stream';
import { CsvError, parse, type Info } from 'csv-parse';

export type CsvRow =
  | { kind: 'header'; line: number; values: string[] }
  | { kind: 'row'; line: number; values: string[]; source: string }
  | { kind: 'bad'; line: number; reason: string; source: string };

export interface CsvRowsOptions {
  delimiter?: string;
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

function describe(error: CsvError, headerWidth: number): string {
  switch (error.code) {
    case 'CSV_RECORD_INCONSISTENT_FIELDS_LENGTH': {
      const got = (error as CsvError & { record?: unknown[] }).record?.length;
      return `has ${got ?? 'a different number of'} column${got === 1 ? '' : 's'}; the header has ${headerWidth}`;
    }
    case 'CSV_INVALID_CLOSING_QUOTE':
      return 'a quoted field is followed by other text before the next delimiter';
    default:
      return error.message;
  }
}

/**
 * The rows of a CSV file, streamed through csv-parse: the header first, then each row with the
 * line it starts on and its text, or why it is not a row (a different number of columns than the
 * header, a broken quote). Such a row is reported and the next one read.
 *
 * A file that ends in the middle of a row is truncated, and that is thrown after the rows before
 * it: an opening quote never closed (the last field cut, or a stray quote that swallowed the rest
 * of the file), or a last row with fewer columns and no line end.
 */
export async function* readCsvRows(input: Readable, options: CsvRowsOptions = {}): AsyncGenerator<CsvRow> {
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
      const line = startLine((error as CsvError & { lines?: number }).lines ?? 0, raw);
      yield { kind: 'bad', line, reason: describe(error, headerWidth), source: recordText(raw) };
    }
  };
  try {
    for await (const parsed of parser as AsyncIterable<Parsed>) {
      yield* drainSkipped(parsed.seq);
      const line = startLine(parsed.info.lines, parsed.raw);
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
    const line = startLine((last.error as CsvError & { lines?: number }).lines ?? 0, last.raw);
    throw new Error(
      last.error.code === 'CSV_QUOTE_NOT_CLOSED'
        ? `the file ends inside a quoted field opened on line ${line}: it is truncated (or a stray quote on that line swallowed the rest of the file)`
        : `the file ends in the middle of line ${line} (${describe(last.error, headerWidth)}): it is truncated`,
    );
  }
}
