import type { Lot } from '../domain/lot.ts';
import type { UpsertSummary } from '../repositories/lots-repository.ts';
import { describeFieldErrors, normaliseLot } from './normalise-lot.ts';
import type { SourceRecord } from './source-record.ts';

export interface ImportSummary {
  /** Records read (blank lines are not records). */
  read: number;
  inserted: number;
  updated: number;
  unchanged: number;
  /** Records rejected: unreadable, or not a valid lot. */
  skipped: number;
}

export interface RejectedRecord {
  line: number;
  reason: string;
}

/** The one repository method the importer needs, so that tests and other stores can stand in. */
export interface LotSink {
  upsertBatch(lots: Lot[], now?: Date): Promise<UpsertSummary>;
}

export interface ImportLotsOptions {
  lots: LotSink;
  /** Lots per transaction. Larger batches load faster; each holds the SQLite write lock longer. */
  batchSize?: number;
  /** Called for every record that is skipped, in file order. */
  onRejected?: (rejected: RejectedRecord) => void;
  /** Called after each batch is stored, with the running totals. */
  onProgress?: (summary: Readonly<ImportSummary>) => void;
  now?: () => Date;
}

export const DEFAULT_BATCH_SIZE = 1000;

/**
 * Reading the source failed part-way (a truncated gzip, a disk error). Every good record read
 * before the failure has been stored; `summary` counts them.
 */
export class SourceReadError extends Error {
  constructor(
    readonly summary: ImportSummary,
    /** The last line read before the failure; 0 when nothing could be read. */
    readonly afterLine: number,
    cause: unknown,
  ) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
    this.name = 'SourceReadError';
  }
}

export function emptySummary(): ImportSummary {
  return { read: 0, inserted: 0, updated: 0, unchanged: 0, skipped: 0 };
}

export function addSummaries(a: ImportSummary, b: ImportSummary): ImportSummary {
  return {
    read: a.read + b.read,
    inserted: a.inserted + b.inserted,
    updated: a.updated + b.updated,
    unchanged: a.unchanged + b.unchanged,
    skipped: a.skipped + b.skipped,
  };
}

/**
 * Normalises the records of any format and upserts the good ones in batches, by (auction, lot_id),
 * following the repository's merge rule. A bad record is reported and skipped; it never stops the
 * good ones. A database error stops the import (batches already stored stay stored).
 */
export async function importLots(records: AsyncIterable<SourceRecord>, options: ImportLotsOptions): Promise<ImportSummary> {
  const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
  if (!Number.isInteger(batchSize) || batchSize < 1) throw new RangeError(`batchSize must be a positive integer; got ${batchSize}`);
  const now = options.now ?? (() => new Date());
  const summary = emptySummary();
  let batch: Lot[] = [];
  let lastLine = 0;

  const flush = async () => {
    if (batch.length === 0) return;
    const stored = await options.lots.upsertBatch(batch, now());
    batch = [];
    summary.inserted += stored.inserted;
    summary.updated += stored.updated;
    summary.unchanged += stored.unchanged;
    options.onProgress?.(summary);
  };
  const reject = (line: number, reason: string) => {
    summary.skipped++;
    options.onRejected?.({ line, reason });
  };

  const iterator = records[Symbol.asyncIterator]();
  let finished = false;
  try {
    for (;;) {
      let next: IteratorResult<SourceRecord>;
      try {
        next = await iterator.next();
      } catch (error) {
        finished = true;
        // Store what was read before the failure: a broken tail must not cost the good head.
        await flush();
        throw new SourceReadError({ ...summary }, lastLine, error);
      }
      if (next.done) break;
      const record = next.value;
      lastLine = record.line;
      summary.read++;
      if ('error' in record) {
        reject(record.line, record.error);
        continue;
      }
      const result = normaliseLot(record.raw);
      if (!result.ok) {
        reject(record.line, describeFieldErrors(result.errors));
        continue;
      }
      batch.push(result.lot);
      if (batch.length >= batchSize) await flush();
    }
    finished = true;
    await flush();
    return summary;
  } finally {
    // A database error stopped the loop early: let the source close its file.
    if (!finished) await iterator.return?.();
  }
}
