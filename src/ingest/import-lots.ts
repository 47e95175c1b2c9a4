import { setImmediate } from 'node:timers/promises';
import type { Lot } from '../domain/lot.ts';
import type { UpsertOptions, UpsertSummary } from '../storage/repositories/lots-repository.ts';
import { prepareRecord } from './prepare-lot.ts';
import type { SourceRecord } from './sources/source-record.ts';

export interface ImportSummary {
  /** Records read (blank lines are not records; a vendor vehicle record counts once per lot). */
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
  /** The record as the file had it, when the format keeps it (for the --report file). */
  source?: string;
}

/** The one repository method the importer needs, so that tests and other stores can stand in. */
export interface LotSink {
  upsertBatch(lots: Lot[], now?: Date, options?: UpsertOptions): Promise<UpsertSummary>;
}

/** Derives values of a lot's empty fields from elsewhere (the VIN); see enrich-from-vin.ts. */
export interface LotEnricher {
  /** The values found for fields the lot leaves null, or undefined when there are none. */
  derive(lot: Lot): Promise<Partial<Lot> | undefined>;
}

export interface ImportLotsOptions {
  lots: LotSink;
  /** Lots per transaction. Larger batches load faster; each holds the SQLite write lock longer. */
  batchSize?: number;
  /** Called for every record that is skipped, in file order. */
  onRejected?: (rejected: RejectedRecord) => void;
  /** Called after each batch is stored, with the running totals. */
  onProgress?: (summary: Readonly<ImportSummary>) => void;
  /** Fills fields a source left empty, without ever replacing a value a source gave. */
  enricher?: LotEnricher;
  /** Stops reading: the lots read so far are stored, then ImportInterruptedError is thrown. */
  signal?: AbortSignal;
  /** The object to count into, for a progress display to read while the import runs. */
  summary?: ImportSummary;
  now?: () => Date;
}

export const DEFAULT_BATCH_SIZE = 1000;

/**
 * Reading the source failed part-way (a truncated file, a disk error). Every good record read
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

/** The import was asked to stop (Ctrl-C). Everything read before is stored; a re-run finishes the job. */
export class ImportInterruptedError extends Error {
  constructor(
    readonly summary: ImportSummary,
    readonly afterLine: number,
  ) {
    super(`interrupted after line ${afterLine}`);
    this.name = 'ImportInterruptedError';
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

/** Lots prepared elsewhere (the parsing worker), in file order, with the records refused among them. */
export interface PreparedChunk {
  /** Records this chunk accounts for: its lots plus its rejected ones. */
  read: number;
  lastLine: number;
  lots: Lot[];
  /** derived[i] belongs to lots[i]; absent when nothing was enriched. */
  derived?: (Partial<Lot> | undefined)[];
  rejected: RejectedRecord[];
}

/**
 * The batching half of an import: collects good lots, stores them a batch (one transaction) at a
 * time and keeps the summary. Shared by the in-process import and the one fed by a worker.
 */
class BatchWriter {
  readonly summary: ImportSummary;
  lastLine = 0;
  private lots: Lot[] = [];
  private derived: (Partial<Lot> | undefined)[] | null = null;
  private readonly batchSize: number;
  private readonly now: () => Date;

  constructor(private readonly options: ImportLotsOptions) {
    const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
    if (!Number.isInteger(batchSize) || batchSize < 1) throw new RangeError(`batchSize must be a positive integer; got ${batchSize}`);
    this.batchSize = batchSize;
    this.now = options.now ?? (() => new Date());
    this.summary = options.summary ?? emptySummary();
  }

  reject(rejected: RejectedRecord): void {
    this.summary.skipped++;
    this.options.onRejected?.(rejected);
  }

  async add(lot: Lot, derived: Partial<Lot> | undefined): Promise<void> {
    if (derived !== undefined) {
      this.derived ??= new Array<Partial<Lot> | undefined>(this.lots.length);
      this.derived[this.lots.length] = derived;
    }
    this.lots.push(lot);
    if (this.lots.length >= this.batchSize) await this.flush();
  }

  async flush(): Promise<void> {
    if (this.lots.length === 0) return;
    const lots = this.lots;
    const derived = this.derived;
    this.lots = [];
    this.derived = null;
    const stored = await this.options.lots.upsertBatch(lots, this.now(), derived ? { derived } : {});
    this.summary.inserted += stored.inserted;
    this.summary.updated += stored.updated;
    this.summary.unchanged += stored.unchanged;
    this.options.onProgress?.(this.summary);
    // Storing a batch and taking the next lots from a fast source only ever wait on promises that
    // are already settled, which never lets timers or signals run: once a batch, let them (the
    // progress display, Ctrl-C).
    await setImmediate();
  }
}

/**
 * Drives an import to its end: every record is read, good lots are stored, bad ones reported. A
 * failure of the source stores what was read and becomes SourceReadError; a stop request stores
 * what was read and becomes ImportInterruptedError; a database error stops the import at once
 * (batches already stored stay stored).
 */
async function drive<T>(
  source: AsyncIterable<T>,
  writer: BatchWriter,
  options: ImportLotsOptions,
  handle: (item: T) => Promise<void>,
): Promise<ImportSummary> {
  const iterator = source[Symbol.asyncIterator]();
  let finished = false;
  try {
    for (;;) {
      if (options.signal?.aborted) {
        await writer.flush();
        throw new ImportInterruptedError({ ...writer.summary }, writer.lastLine);
      }
      let next: IteratorResult<T>;
      try {
        next = await iterator.next();
      } catch (error) {
        finished = true;
        // Store what was read before the failure: a broken tail must not cost the good head.
        await writer.flush();
        throw new SourceReadError({ ...writer.summary }, writer.lastLine, error);
      }
      if (next.done) break;
      await handle(next.value);
    }
    finished = true;
    await writer.flush();
    return writer.summary;
  } finally {
    // Stopped early (a database error, a stop request): let the source close its file.
    if (!finished) await iterator.return?.();
  }
}

/**
 * Normalises the records of any format and upserts the good ones in batches, by (auction, lot_id),
 * following the repository's merge rule. A bad record is reported and skipped; it never stops the
 * good ones.
 */
export async function importLots(records: AsyncIterable<SourceRecord>, options: ImportLotsOptions): Promise<ImportSummary> {
  const writer = new BatchWriter(options);
  const { enricher } = options;
  return drive(records, writer, options, async (record) => {
    writer.lastLine = record.line;
    writer.summary.read++;
    const prepared = prepareRecord(record);
    if (!prepared.ok) {
      const { line, reason, source } = prepared;
      writer.reject(source === undefined ? { line, reason } : { line, reason, source });
      return;
    }
    await writer.add(prepared.lot, enricher ? await enricher.derive(prepared.lot) : undefined);
  });
}

/** importLots for lots already read and normalised elsewhere, such as in a worker thread. */
export async function importPreparedChunks(chunks: AsyncIterable<PreparedChunk>, options: ImportLotsOptions): Promise<ImportSummary> {
  const writer = new BatchWriter(options);
  return drive(chunks, writer, options, async (chunk) => {
    writer.summary.read += chunk.read;
    for (const rejected of chunk.rejected) writer.reject(rejected);
    for (let i = 0; i < chunk.lots.length; i++) await writer.add(chunk.lots[i]!, chunk.derived?.[i]);
    writer.lastLine = chunk.lastLine;
  });
}
