import { Readable } from 'node:stream';
import { parse as parseCsvSync } from 'csv-parse/sync';
import type { CsvRow } from '../csv/csv-row.ts';
import { readCsvRows } from '../csv/csv-rows.ts';
import { isAuctionsApiRecord, lotsFromAuctionsApiRecord } from '../formats/auctionsapi-json.ts';
import { copartRowMapper, describeCopartLayout, isCopartHeader, type MappedRecord } from '../formats/copart-csv.ts';
import { csvMappingRowMapper, MappingError, type CsvMapping } from '../formats/csv-mapping.ts';
import { splitJsonValues } from '../formats/json-values.ts';
import { readNdjsonRecords } from '../formats/ndjson-records.ts';
import { IngestError, messageOf } from '../ingest-error.ts';
import { gunzipIfCompressed, peek } from './peek.ts';
import type { SourceRecord } from './source-record.ts';

/**
 * Opens any supported lot file by what it contains, not by its name: gzip or not, then one of
 *  - canonical lots: NDJSON (one Lot per line) or a JSON array of Lots;
 *  - vendor vehicle records (auctionsapi): a JSON array, NDJSON or a single JSON object;
 *  - Copart's sales-data CSV, recognised by its header;
 *  - any other CSV, with a mapping file (--map).
 * A file that is none of these (an HTML page served instead of a download, an empty or binary
 * file) is refused before anything is read from it.
 */
export const FORMATS = ['auto', 'ndjson', 'auctionsapi', 'copart-csv', 'csv'] as const;
export type FormatName = (typeof FORMATS)[number];

export interface LotSourceOptions {
  /** Forces a format instead of recognising it; 'csv' needs a mapping. Default 'auto'. */
  format?: FormatName;
  /** A CSV mapping: used for any CSV (even Copart's) when given. */
  mapping?: CsvMapping;
  /** Only JSON is expected (an NDJSON upload): anything else is refused with `notJsonMessage`. */
  jsonOnly?: boolean;
}

export interface LotSource {
  /** What the file was taken for, in words: "Copart sales-data CSV (59 columns)". */
  description: string;
  records: AsyncIterable<SourceRecord>;
}

/** How a CSV's rows become lots: Copart's columns, or the operator's mapping file. */
type CsvLayout = 'copart' | 'mapping';

/** The function from a CSV header to its row mapper, for a layout. */
function csvMapperFor(layout: CsvLayout, mapping: CsvMapping | undefined): (header: readonly string[]) => (values: readonly string[]) => MappedRecord {
  if (layout === 'copart') return copartRowMapper;
  if (!mapping) throw new Error('a mapped CSV needs its mapping');
  return (header) => csvMappingRowMapper(mapping, header);
}

const SNIFF_BYTES = 64 * 1024;
const EMPTY = 'the file is empty';

/** Refuses the input: it is not lot data, or not in the form asked for. Nothing was read from it. */
function refuse(stream: Readable, message: string, kind: 'refused' | 'empty' = 'refused'): never {
  stream.destroy();
  throw new IngestError(kind, message);
}

function firstLine(text: string): string {
  const end = text.search(/\r?\n/);
  return end === -1 ? text : text.slice(0, end);
}

/** Why a file whose content is not lot data is refused, or null when it may be. */
export function refusalFor(head: string): string | null {
  const text = head.replace(/^\uFEFF/, '').trimStart();
  if (text === '') return EMPTY;
  if (text.includes('\u0000')) return 'looks like a binary file, not lot data (CSV, NDJSON or JSON)';
  if (/^<(?:!doctype\s+html|html|head|body|meta|title|script)\b/i.test(text) || (/^</.test(text) && /<html[\s>]/i.test(text))) {
    return 'looks like an HTML page (a bot wall or a login page?), not CSV or JSON';
  }
  if (text.startsWith('<')) return 'looks like XML or HTML markup, not CSV or JSON';
  return null;
}

function csvHeader(line: string, delimiter: string | undefined): string[] {
  try {
    const [header] = parseCsvSync(line, { bom: true, relax_quotes: true, ...(delimiter ? { delimiter } : {}) });
    return header ?? [];
  } catch {
    return [];
  }
}

function mapped(line: number, source: string, record: MappedRecord): SourceRecord {
  return record.problems.length > 0 ? { line, raw: record.raw, source, problems: record.problems } : { line, raw: record.raw, source };
}

/** A CSV's rows (header first) as lot-shaped records, through the layout's mapper. */
async function* mapCsvRows(
  rows: AsyncIterable<CsvRow>,
  mapper: (header: readonly string[]) => (values: readonly string[]) => MappedRecord,
): AsyncGenerator<SourceRecord> {
  let map: ((values: readonly string[]) => MappedRecord) | null = null;
  for await (const row of rows) {
    if (row.kind === 'header') map = mapper(row.values);
    else if (row.kind === 'bad') yield { line: row.line, error: row.reason, source: row.source };
    else yield mapped(row.line, row.source, map!(row.values));
  }
}

function csvSource(description: string, input: Readable, layout: CsvLayout, mapping: CsvMapping | undefined): LotSource {
  const rows = readCsvRows(input, mapping?.delimiter ? { delimiter: mapping.delimiter } : {});
  return { description, records: mapCsvRows(rows, csvMapperFor(layout, mapping)) };
}

/** Each vendor record expands into its lots, all on the record's line; canonical lots pass as they are. */
async function* jsonRecords(values: AsyncIterable<SourceRecord>, format: FormatName): AsyncGenerator<SourceRecord> {
  let vendor: boolean | null = format === 'auto' ? null : format === 'auctionsapi';
  for await (const record of values) {
    if ('error' in record) {
      yield record;
      continue;
    }
    vendor ??= isAuctionsApiRecord(record.raw);
    if (!vendor) {
      yield record;
      continue;
    }
    const raw = record.raw as Record<string, unknown>;
    if (!Array.isArray(raw.lots)) {
      yield { line: record.line, error: 'not a vehicle record: it has no "lots" array', ...(record.source ? { source: record.source } : {}) };
      continue;
    }
    const lots = lotsFromAuctionsApiRecord(raw);
    if (lots.length === 0) yield { line: record.line, error: 'the vehicle record has no lots', ...(record.source ? { source: record.source } : {}) };
    for (const lot of lots) yield mapped(record.line, record.source ?? '', lot);
  }
}

async function* parsedJsonValues(input: Readable): AsyncGenerator<SourceRecord> {
  for await (const value of splitJsonValues(input)) {
    if ('error' in value) {
      yield value;
      continue;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(value.text);
    } catch (error) {
      yield { line: value.line, error: `invalid JSON: ${(error as Error).message}`, source: value.text };
      continue;
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      yield { line: value.line, error: `expected a JSON object, got ${parsed === null ? 'null' : Array.isArray(parsed) ? 'an array' : `a ${typeof parsed}`}`, source: value.text };
      continue;
    }
    yield { line: value.line, raw: parsed, source: value.text };
  }
}

function describeJson(format: FormatName, shape: string): string {
  if (format === 'auctionsapi') return `auctionsapi vehicle records (${shape})`;
  if (format === 'ndjson') return `canonical lots (${shape})`;
  return `JSON (${shape}): canonical lots or auctionsapi vehicle records, by their fields`;
}

/** The first record of a JSON file when the sniffed head holds it whole, to tell the format by. */
async function firstJsonRecord(head: string): Promise<unknown> {
  try {
    for await (const value of splitJsonValues(Readable.from([head]))) {
      return 'text' in value ? JSON.parse(value.text) : undefined;
    }
  } catch {
    // The head ends inside the first record: the records themselves will tell.
  }
  return undefined;
}

function jsonFormat(format: FormatName, first: unknown): FormatName {
  if (format !== 'auto' || first === null || typeof first !== 'object') return format;
  return isAuctionsApiRecord(first) ? 'auctionsapi' : 'ndjson';
}

/** The input's first bytes, unzipped; a failure to read them is IngestError 'unreadable'. */
async function sniff(input: Readable): Promise<{ head: Buffer; stream: Readable; compressed: boolean }> {
  try {
    const { stream: plain, compressed } = await gunzipIfCompressed(input);
    return { ...(await peek(plain, SNIFF_BYTES)), compressed };
  } catch (error) {
    throw new IngestError('unreadable', messageOf(error), undefined, undefined, { cause: error });
  }
}

/**
 * Opens the input as lot data, or fails with IngestError: 'unreadable' when its first bytes cannot
 * be read, 'empty' or 'refused' when it is not lot data (or not the format or mapping asked for).
 */
export async function openLotSource(input: Readable, options: LotSourceOptions = {}): Promise<LotSource> {
  const format = options.format ?? 'auto';
  const { head, stream, compressed } = await sniff(input);
  const text = head.toString('utf8');
  const refusal = refusalFor(text);
  if (refusal !== null) refuse(stream, refusal, refusal === EMPTY ? 'empty' : 'refused');
  const gz = compressed ? ', gzip' : '';
  const start = text.replace(/^\uFEFF/, '').trimStart();
  const looksJson = start.startsWith('{') || start.startsWith('[');
  if (options.jsonOnly && !looksJson) refuse(stream, 'is not NDJSON: the first line does not start with "{"');

  if (format === 'copart-csv' || format === 'csv' || options.mapping || (format === 'auto' && !looksJson)) {
    const delimiter = options.mapping?.delimiter;
    const header = csvHeader(firstLine(text.replace(/^\uFEFF/, '')), delimiter);
    if (options.mapping) {
      const mapping = options.mapping;
      try {
        // A column the mapping names and the file lacks is found now, before any row is read.
        csvMappingRowMapper(mapping, header);
      } catch (error) {
        if (error instanceof MappingError) refuse(stream, error.message);
        stream.destroy();
        throw error;
      }
      return csvSource(`CSV through a mapping (${header.length} columns${gz})`, stream, 'mapping', mapping);
    }
    if (format === 'copart-csv' || isCopartHeader(header)) {
      if (!isCopartHeader(header)) {
        refuse(stream, 'this is not a Copart sales-data CSV: its header has no "Lot number", "VIN" and "Sale Date M/D/CY" columns');
      }
      return csvSource(`${describeCopartLayout(header)}${gz ? ' (gzip)' : ''}`, stream, 'copart', undefined);
    }
    if (format === 'csv') refuse(stream, 'a CSV other than Copart\'s needs a mapping file: --map mapping.json (docs/import-formats.md)');
    const columns = header.slice(0, 8).map((name) => JSON.stringify(name.trim())).join(', ');
    refuse(
      stream,
      header.length > 1
        ? `a CSV with columns ${columns}${header.length > 8 ? ', ...' : ''} is not a layout this importer knows: give a mapping file with --map (docs/import-formats.md)`
        : 'is neither JSON nor a CSV with a header line: not lot data',
    );
  }

  const kind = jsonFormat(format, await firstJsonRecord(start));
  if (start.startsWith('[')) {
    return { description: describeJson(kind, `JSON array${gz}`), records: jsonRecords(parsedJsonValues(stream), kind) };
  }
  // One JSON object per line is NDJSON, read line by line; an object spread over several lines
  // (a pretty-printed file) is read by structure instead.
  let wholeFirstLine = false;
  try {
    const value: unknown = JSON.parse(firstLine(start));
    wholeFirstLine = value !== null && typeof value === 'object';
  } catch {
    wholeFirstLine = false;
  }
  if (wholeFirstLine) return { description: describeJson(kind, `NDJSON${gz}`), records: jsonRecords(readNdjsonRecords(stream), kind) };
  return { description: describeJson(kind, `JSON${gz}`), records: jsonRecords(parsedJsonValues(stream), kind) };
}
