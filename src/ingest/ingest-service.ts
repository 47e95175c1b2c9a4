import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import type { LotsRepository } from '../storage/repositories/lots-repository.ts';
import { importFiles, type FileResult, type ImportFilesOptions } from './import-files.ts';
import { BULK_LOAD_BATCH_SIZE, importLots, importPreparedChunks, type ImportLotsOptions, type LotSink } from './import-lots.ts';
import { emptySummary, type ImportSummary } from './import-summary.ts';
import { IngestError } from './ingest-error.ts';
import type { CsvMapping } from './formats/csv-mapping.ts';
import type { FormatName } from './sources/open-lot-source.ts';
import { readFileInWorker } from './worker/read-file-in-worker.ts';
import { storeFileInWorker } from './worker/store-file-in-worker.ts';
import { slicePolicy } from './worker/write-slices.ts';
import type { BulkWriter } from '../storage/database.ts';
import { openLotSource } from './sources/open-lot-source.ts';
import type { SourceRecord } from './sources/source-record.ts';

/** An import's options, less the store: the service brings its own. */
export type ImportRecordsOptions = Omit<ImportLotsOptions, 'lots'> & {
  /** Tune the connection for a bulk load first (the import and seed commands; never the server). */
  bulkLoad?: boolean;
  /** Into an empty catalogue that no server reads meanwhile: build the lots' secondary indexes after the load (importFiles). */
  deferIndexes?: boolean;
};

/** A feed's file from this size on is parsed on a worker thread, beside the batches being stored. */
const WORKER_FROM_BYTES = 4 * 1024 * 1024;

/** How a pulled feed's lots are read and stored (feeds/). */
export interface FeedImportOptions {
  format: FormatName;
  mapping?: CsvMapping | undefined;
  /** Told the keys (auction, lot_id) of each stored batch's lots (a listing feed keeps them). */
  onStored?: (keys: [string, number][]) => void;
  signal?: AbortSignal;
  /** Lots per transaction; BULK_LOAD_BATCH_SIZE unless given. */
  batchSize?: number;
  /** The feed's name: the source the stored lots and their versions carry. */
  source: string;
}

/** What a feed's file or page gave: the summary, and the failure that stopped it part-way, if any. */
export interface FeedImportResult {
  format: string;
  summary: ImportSummary;
  /** Reading stopped part-way ('cut-short', 'interrupted'): what was read before it is stored. */
  failure: IngestError | null;
  /** Stored on a thread of its own: how long each batch's transaction held the write lock. */
  heldMs?: number[];
}

/** Where a feed's file is stored off the event loop (a SQLite file's connection of its own), and what takes part in its batches. */
export interface FeedStoreThread {
  writer: BulkWriter;
  photoArchive: boolean;
  /** While the server's writers come, a batch is written in transactions of about this lock time, ms (FEEDS_SLICE_MS; 0: whole batches). */
  sliceMs: number;
}

export interface UploadResult {
  /** What the body was read as, in words. */
  format: string;
  summary: ImportSummary;
}

/**
 * Ingestion: the one way lots get into storage, for the CLI's import and seed, the admin endpoint
 * and the first-run demo data. Failures short of a fault are IngestErrors (ingest-error.ts).
 */
export class IngestService {
  constructor(
    private readonly lots: LotsRepository,
    /** DATA_DIR: where the VIN decoder's database is unpacked for enrichment. */
    private readonly dataDir: string,
    /**
     * Set (a SQLite file in the server): a feed's file is parsed on one thread and stored on
     * another with its own connection, so that neither holds the event loop that answers searches.
     */
    private readonly feedStore: FeedStoreThread | null = null,
  ) {}

  /** How many lots are stored: the first-run demo loads its data only into an empty catalogue. */
  countLots(): Promise<number> {
    return this.lots.count();
  }

  /**
   * `vinhistory import`: files (or stdin, '-') one after the other, each file's outcome in order.
   * Into an empty catalogue, with `deferIndexes` (no server reads the database meanwhile), the
   * lots' secondary indexes are built once the files are stored rather than lot by lot.
   */
  async importFiles(files: readonly string[], options: ImportFilesOptions & { deferIndexes?: boolean }): Promise<FileResult[]> {
    const { deferIndexes, ...importOptions } = options;
    await this.lots.tuneForBulkLoad();
    return this.withIndexesDeferred(deferIndexes === true, () => importFiles(files, importOptions, { lots: this.lots, dataDir: this.dataDir }));
  }

  /** Records already read (a generator, a file of the demo data), prepared and stored in batches. */
  async importRecords(records: AsyncIterable<SourceRecord>, options: ImportRecordsOptions = {}): Promise<ImportSummary> {
    const { bulkLoad, deferIndexes, ...importOptions } = options;
    if (bulkLoad) await this.lots.tuneForBulkLoad();
    return this.withIndexesDeferred(deferIndexes === true, () => importLots(records, { ...importOptions, lots: this.lots }));
  }

  /**
   * Runs a load with the lots' secondary indexes dropped if asked and the catalogue is empty, and
   * builds them again when it ends, however it ends (a process that dies meanwhile leaves them to
   * the next start: storage/deferred-indexes.ts).
   */
  private async withIndexesDeferred<T>(defer: boolean, load: () => Promise<T>): Promise<T> {
    if (!defer || !(await this.lots.deferIndexesWhileEmpty())) return load();
    try {
      return await load();
    } finally {
      await this.lots.buildDeferredIndexes();
    }
  }

  /**
   * A feed's downloaded file, read on a worker thread and stored in the small batches that keep
   * searches on the same database quick (BULK_LOAD_BATCH_SIZE). A file that is not lot data (or
   * not the format asked for) throws its IngestError before anything is stored.
   */
  async importFeedFile(file: string, options: FeedImportOptions & { bytes: number }): Promise<FeedImportResult> {
    const common = { batchSize: options.batchSize ?? BULK_LOAD_BATCH_SIZE, source: options.source, ...(options.signal ? { signal: options.signal } : {}) };
    if (options.bytes < WORKER_FROM_BYTES) {
      // A small file costs less to read here than a worker thread costs to start.
      const input = createReadStream(file, { highWaterMark: 256 * 1024 });
      try {
        const source = await openLotSource(input, { format: options.format, ...(options.mapping ? { mapping: options.mapping } : {}) });
        return await this.storeFeed(source.description, (sink, summary) => importLots(source.records, { lots: sink, summary, ...common }), options);
      } finally {
        input.destroy();
      }
    }
    if (this.feedStore) {
      const stored = await storeFileInWorker(
        { file, format: options.format, mapping: options.mapping, batchSize: common.batchSize, source: options.source, writer: this.feedStore.writer, photoArchive: this.feedStore.photoArchive, slices: slicePolicy(this.feedStore.sliceMs) },
        { ...(options.onStored ? { onStored: options.onStored } : {}), ...(options.signal ? { signal: options.signal } : {}) },
      );
      return { format: stored.description, summary: stored.summary, failure: stored.failure, heldMs: stored.heldMs };
    }
    const source = await readFileInWorker({ file, format: options.format, ...(options.mapping ? { mapping: options.mapping } : {}), maxInFlight: 8 });
    try {
      return await this.storeFeed(source.description, (sink, summary) => importPreparedChunks(source.chunks, { lots: sink, summary, ...common }), options);
    } finally {
      await source.close();
    }
  }

  /** A page of a feed's JSON API, as a stream of JSON values: the same checks and stores as a file. */
  async importFeedPage(body: Readable, options: FeedImportOptions): Promise<FeedImportResult> {
    const source = await openLotSource(body, { format: options.format, jsonOnly: true });
    return this.storeFeed(source.description, (sink, summary) =>
      importLots(source.records, { lots: sink, batchSize: options.batchSize ?? BULK_LOAD_BATCH_SIZE, summary, source: options.source, ...(options.signal ? { signal: options.signal } : {}) }),
    options);
  }

  private async storeFeed(
    format: string,
    run: (sink: LotSink, summary: ImportSummary) => Promise<ImportSummary>,
    options: FeedImportOptions,
  ): Promise<FeedImportResult> {
    const onStored = options.onStored;
    const sink: LotSink = onStored
      ? {
          upsertBatch: async (lots, upsert) => {
            const stored = await this.lots.upsertBatch(lots, upsert);
            onStored(lots.map((lot): [string, number] => [lot.auction, lot.lot_id]));
            return stored;
          },
        }
      : this.lots;
    const summary = emptySummary();
    try {
      await run(sink, summary);
      return { format, summary, failure: null };
    } catch (error) {
      if (error instanceof IngestError && (error.kind === 'cut-short' || error.kind === 'interrupted')) return { format, summary: error.summary, failure: error };
      throw error;
    }
  }

  /**
   * An upload of NDJSON (canonical lots or vendor vehicle records, gzip or not), streamed into the
   * importer as it arrives: refused whole when it is not NDJSON, cut short when it stops early.
   * `options.source` names who pushed it (the admin API: `admin-api:<operator token name>`).
   */
  async importUpload(body: Readable, options: Omit<ImportLotsOptions, 'lots' | 'enricher'>): Promise<UploadResult> {
    const source = await openLotSource(body, { format: 'auto', jsonOnly: true });
    const summary = await importLots(source.records, { ...options, lots: this.lots });
    return { format: source.description, summary };
  }
}

