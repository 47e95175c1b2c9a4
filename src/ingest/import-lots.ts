import { setImmediate } from 'node:timers/promises';
import type { IncomingLot, LotsRepository } from '../storage/repositories/lots-repository.ts';
import { emptySummary, type ImportSummary, type RejectedRecord } from './import-summary.ts';
import { IngestError, messageOf } from './ingest-error.ts';
import { PREPARE_CHUNK_SIZE, prepareChunks, type LotEnricher, type PreparedChunk } from './prepare-lot.ts';
import type { SourceRecord } from './sources/source-record.ts';

/** The one repository method the importer needs, so that tests and other stores can stand in. */
export type LotSink = Pick<LotsRepository, 'upsertBatch'>;

export interface ImportLotsOptions {
  lots: LotSink;
  /** Lots per transaction. Larger batches load faster; each holds the SQLite write lock longer. */
  batchSize?: number;
  /** Called for every record that is skipped, in file order. */
  onRejected?: (rejected: RejectedRecord) => void;
  /** Fills fields a source left empty, without ever replacing a value a source gave. */
  enricher?: LotEnricher;
  /** Stops reading: the lots read so far are stored, then an IngestError 'interrupted' is thrown. */
  signal?: AbortSignal;
  /** The object to count into, for a progress display to read while the import runs. */
  summary?: ImportSummary;
  /**
   * What brings these lots, kept in their history (domain/lot-history.ts): a file's name for
   * `vinhistory import`, `admin-api:<operator token name>` for the admin push, `demo`, a feed's name.
   */
  source?: string;
}

const DEFAULT_BATCH_SIZE = 1000;
/**
 * Lots per transaction of the import and seed commands. On SQLite each transaction holds the write
 * lock, and a server on the same database waits it out in its searches: measured on 100k-200k
 * synthetic lots (docs/cli.md), a batch of 10,000 held it about 300 ms, 1,000 about 65 ms, 250
 * about 10 ms, within the search latency target. Larger batches load faster (each writes back the
 * index pages it touched once: 23k lots/s at 10,000 against 10k lots/s at 250), so an import into
 * a database no server is using can pass `--batch-size 10000`. The server's own HTTP ingestion
 * uses small batches.
 */
export const BULK_LOAD_BATCH_SIZE = 250;

/** Collects good lots, stores them a batch (one transaction) at a time and keeps the summary. */
class BatchWriter {
  readonly summary: ImportSummary;
  lastLine = 0;
  private lots: IncomingLot[] = [];
  private readonly batchSize: number;

  constructor(private readonly options: ImportLotsOptions) {
    const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
    if (!Number.isInteger(batchSize) || batchSize < 1) throw new RangeError(`batchSize must be a positive integer; got ${batchSize}`);
    this.batchSize = batchSize;
    this.summary = options.summary ?? emptySummary();
  }

  reject(rejected: RejectedRecord): void {
    this.summary.skipped++;
    this.options.onRejected?.(rejected);
  }

  /** Takes a chunk's lots, storing each batch as it fills (one await a batch, not one a lot). */
  async addAll(lots: readonly IncomingLot[]): Promise<void> {
    for (const lot of lots) {
      this.lots.push(lot);
      if (this.lots.length >= this.batchSize) await this.flush();
    }
  }

  async flush(): Promise<void> {
    if (this.lots.length === 0) return;
    const lots = this.lots;
    this.lots = [];
    const stored = await this.options.lots.upsertBatch(lots, this.options.source === undefined ? {} : { source: this.options.source });
    this.summary.inserted += stored.inserted;
    this.summary.updated += stored.updated;
    this.summary.unchanged += stored.unchanged;
    // Storing a batch and taking the next lots from a fast source only ever wait on promises that
    // are already settled, which never lets timers or signals run: once a batch, let them (the
    // progress display, Ctrl-C).
    await setImmediate();
  }
}

/**
 * Stores prepared lots in batches, by (auction, lot_id), following the repository's merge rule,
 * and reports the rejected records, to the end of the chunks. A failure of the source stores what
 * was read and becomes IngestError 'cut-short'; a stop request stores what was read and becomes
 * IngestError 'interrupted'; a database error stops the import at once (batches already stored
 * stay stored).
 */
export async function importPreparedChunks(chunks: AsyncIterable<PreparedChunk>, options: ImportLotsOptions): Promise<ImportSummary> {
  const writer = new BatchWriter(options);
  const iterator = chunks[Symbol.asyncIterator]();
  let finished = false;
  try {
    for (;;) {
      if (options.signal?.aborted) {
        await writer.flush();
        throw new IngestError('interrupted', `interrupted after line ${writer.lastLine}`, { ...writer.summary }, writer.lastLine);
      }
      let next: IteratorResult<PreparedChunk>;
      try {
        next = await iterator.next();
      } catch (error) {
        finished = true;
        // Store what was read before the failure: a broken tail must not cost the good head.
        await writer.flush();
        throw new IngestError('cut-short', messageOf(error), { ...writer.summary }, writer.lastLine, { cause: error });
      }
      if (next.done) break;
      const chunk = next.value;
      writer.summary.read += chunk.read;
      for (const rejected of chunk.rejected) writer.reject(rejected);
      await writer.addAll(chunk.lots);
      writer.lastLine = chunk.lastLine;
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
 * Prepares the records of any format in this thread (prepare-lot.ts) and stores them as
 * importPreparedChunks does. A bad record is reported and skipped; it never stops the good ones.
 */
export async function importLots(records: AsyncIterable<SourceRecord>, options: ImportLotsOptions): Promise<ImportSummary> {
  const chunkSize = Math.min(options.batchSize ?? DEFAULT_BATCH_SIZE, PREPARE_CHUNK_SIZE);
  return importPreparedChunks(prepareChunks(records, { chunkSize, enricher: options.enricher }), options);
}
