import type { Readable } from 'node:stream';
import type { LotsRepository } from '../storage/repositories/lots-repository.ts';
import { importFiles, type FileResult, type ImportFilesOptions } from './import-files.ts';
import { importLots, type ImportLotsOptions } from './import-lots.ts';
import type { ImportSummary } from './import-summary.ts';
import { openLotSource } from './sources/open-lot-source.ts';
import type { SourceRecord } from './sources/source-record.ts';

/** An import's options, less the store: the service brings its own. */
export type ImportRecordsOptions = Omit<ImportLotsOptions, 'lots'> & {
  /** Tune the connection for a bulk load first (the import and seed commands; never the server). */
  bulkLoad?: boolean;
};

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
  ) {}

  /** How many lots are stored: the first-run demo loads its data only into an empty catalogue. */
  countLots(): Promise<number> {
    return this.lots.count();
  }

  /** `vinhistory import`: files (or stdin, '-') one after the other, each file's outcome in order. */
  async importFiles(files: readonly string[], options: ImportFilesOptions): Promise<FileResult[]> {
    await this.lots.tuneForBulkLoad();
    return importFiles(files, options, { lots: this.lots, dataDir: this.dataDir });
  }

  /** Records already read (a generator, a file of the demo data), prepared and stored in batches. */
  async importRecords(records: AsyncIterable<SourceRecord>, options: ImportRecordsOptions = {}): Promise<ImportSummary> {
    const { bulkLoad, ...importOptions } = options;
    if (bulkLoad) await this.lots.tuneForBulkLoad();
    return importLots(records, { ...importOptions, lots: this.lots });
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

