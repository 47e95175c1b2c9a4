import type { Lot } from '../domain/lot.ts';
import type { IncomingLot } from '../storage/repositories/lots-repository.ts';
import type { RejectedRecord } from './import-summary.ts';
import { describeFieldErrors, normaliseLot, type FieldError } from './normalise-lot.ts';
import type { SourceRecord } from './sources/source-record.ts';

export type PreparedRecord =
  | { ok: true; line: number; lot: Lot }
  | { ok: false; line: number; reason: string; source?: string };

/** Derives values of a lot's empty fields from elsewhere (the VIN); see enrich-from-vin.ts. */
export interface LotEnricher {
  /** The values found for fields the lot leaves null, or undefined when there are none. */
  derive(lot: Lot): Promise<Partial<Lot> | undefined>;
}

/** Lots ready to store, in file order, with the records refused among them. */
export interface PreparedChunk {
  /** Records this chunk accounts for: its lots plus its rejected ones. */
  read: number;
  lastLine: number;
  /** Each lot carrying the values enrichment derived for it, if any. */
  lots: IncomingLot[];
  rejected: RejectedRecord[];
}

/**
 * One record of any format to a Lot, or the reason it cannot be one: what the format could not map
 * first, then whatever normalisation finds wrong with the other fields, so that one line of the
 * report names every problem of the record.
 */
export function prepareRecord(record: SourceRecord): PreparedRecord {
  if ('error' in record) return withSource({ ok: false, line: record.line, reason: record.error }, record.source);
  const result = normaliseLot(record.raw);
  const problems = record.problems ?? [];
  if (result.ok && problems.length === 0) return { ok: true, line: record.line, lot: result.lot };
  // A field the format already refused was passed on as null; its "is required" would repeat it.
  const named = new Set(problems.map((problem) => problem.field));
  const errors: FieldError[] = [...problems, ...(result.ok ? [] : result.errors.filter((error) => !named.has(error.field)))];
  return withSource({ ok: false, line: record.line, reason: describeFieldErrors(errors) }, record.source);
}

function withSource(prepared: PreparedRecord & { ok: false }, source: string | undefined): PreparedRecord {
  return source === undefined ? prepared : { ...prepared, source };
}

/**
 * Records per prepared chunk (a message from the parsing worker, or a step of an import read
 * in-process), unless the import says otherwise: a stop request is seen between chunks.
 */
export const PREPARE_CHUNK_SIZE = 500;

const emptyChunk = (): PreparedChunk => ({ read: 0, lastLine: 0, lots: [], rejected: [] });

/**
 * The prepare loop of every import, on a worker thread or not: records of any format become lots
 * ready to store (normalised, and enriched when an enricher is given) or rejected records, in file
 * order, `chunkSize` records at a time. When the records fail part-way, the chunk read before the
 * failure comes first, then the failure.
 */
export async function* prepareChunks(
  records: AsyncIterable<SourceRecord>,
  options: { chunkSize: number; enricher?: LotEnricher | undefined },
): AsyncGenerator<PreparedChunk> {
  const { chunkSize, enricher } = options;
  let chunk = emptyChunk();
  try {
    for await (const record of records) {
      chunk.read++;
      chunk.lastLine = record.line;
      const prepared = prepareRecord(record);
      if (!prepared.ok) {
        const { line, reason, source } = prepared;
        chunk.rejected.push(source === undefined ? { line, reason } : { line, reason, source });
      } else {
        const derived = enricher ? await enricher.derive(prepared.lot) : undefined;
        chunk.lots.push(derived ? { ...prepared.lot, derived } : prepared.lot);
      }
      if (chunk.read >= chunkSize) {
        yield chunk;
        chunk = emptyChunk();
      }
    }
  } catch (error) {
    if (chunk.read > 0) yield chunk;
    throw error;
  }
  if (chunk.read > 0) yield chunk;
}
