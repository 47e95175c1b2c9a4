import { open } from 'node:fs/promises';
import path from 'node:path';
import type { ReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { createVinEnricher, type VinEnricher } from './enrich-from-vin.ts';
import type { CsvMapping } from './formats/csv-mapping.ts';
import { importLots, importPreparedChunks, type ImportLotsOptions, type LotSink } from './import-lots.ts';
import { emptySummary, type ImportSummary } from './import-summary.ts';
import { IngestError, messageOf } from './ingest-error.ts';
import { PREPARE_CHUNK_SIZE } from './prepare-lot.ts';
import { startProgress } from './progress.ts';
import { SkippedReport } from './skipped-report.ts';
import { openLotSource, type FormatName } from './sources/open-lot-source.ts';
import { readFileInWorker } from './worker/read-file-in-worker.ts';

/**
 * The driver of `vinhistory import`: files (or stdin, as '-') read one after the other, each parsed
 * on a worker thread or in this one, stored in batches, with progress, skipped records and notices
 * on stderr and the skipped records in a report file. What each file gave comes back; printing it
 * is the caller's.
 */
export interface ImportFilesOptions {
  /** Read the files as this format instead of recognising it. */
  format: FormatName;
  mapping?: CsvMapping | undefined;
  /** Lots per transaction. */
  batchSize: number;
  /** Fill empty vehicle fields from the VIN (NHTSA vPIC, offline). */
  enrich: boolean;
  /** Parse files on a worker thread (stdin is always read on this one). */
  worker: boolean;
  /** Show a progress bar (or progress lines) on stderr. */
  progress: boolean;
  /** Where to write the skipped records too, one JSON object per line. */
  reportFile?: string | undefined;
  /** Stops reading: the batch in hand is stored, and the file in hand ends `interrupted`. */
  signal: AbortSignal;
}

export interface FileResult extends ImportSummary {
  file: string;
  /** What the file was read as. */
  format?: string;
  /** Why the file could not be read, or stopped being readable part-way. */
  error?: string;
  /** Set when a stop request ended the import in this file. */
  interrupted?: true;
  /** Set when the file is not lot data (an HTML page, a CSV without a mapping): nothing was read. */
  refused?: true;
}

interface FilesContext {
  lots: LotSink;
  options: ImportFilesOptions;
  report: SkippedReport | null;
  /** Enriches what is read on this thread; a worker opens its own. */
  enricher: VinEnricher | undefined;
  dataDir: string;
}

const unpackingNotice = (dataDir: string) => () =>
  process.stderr.write(`unpacking the NHTSA vPIC database into ${dataDir}/vpic (once, about 75 MB)\n`);

/**
 * A file's lots name the file as their source (lot history): its name without the folders, which
 * say where the operator keeps it rather than what it is; stdin is `stdin`.
 */
export function fileSource(file: string): string {
  return file === '-' ? 'stdin' : path.basename(file);
}

export async function importFiles(files: readonly string[], options: ImportFilesOptions, store: { lots: LotSink; dataDir: string }): Promise<FileResult[]> {
  const report = options.reportFile ? await SkippedReport.open(options.reportFile) : null;
  let enricher: VinEnricher | undefined;
  try {
    // Files are enriched on their worker thread; stdin (and --no-worker) here.
    if (options.enrich && (!options.worker || files.includes('-'))) {
      enricher = await createVinEnricher({ dataDir: store.dataDir, onUnpack: unpackingNotice(store.dataDir) });
    }
    const context: FilesContext = { lots: store.lots, options, report, enricher, dataDir: store.dataDir };
    const done: FileResult[] = [];
    for (const file of files) {
      if (options.signal.aborted) break;
      done.push(await importFile(file, context));
    }
    return done;
  } finally {
    await enricher?.close();
    await report?.close();
  }
}

/** How one file's records reach the batches: read here (stdin) or prepared by a worker thread. */
interface FileReading {
  format: string;
  bytesRead: () => number;
  size: number | null;
  run: (options: ImportLotsOptions) => Promise<ImportSummary>;
  /** With --enrich, once the file is read: lots given values from their VIN, and VINs decoded. */
  enriched: () => { enriched: number; decoded: number } | undefined;
  close: () => Promise<void>;
}

async function readInProcess(file: string, context: FilesContext): Promise<FileReading> {
  let stream: Readable = process.stdin;
  let bytesRead = () => 0;
  let size: number | null = null;
  if (file !== '-') {
    const handle = await open(file, 'r').catch((error: unknown) => {
      throw new IngestError('unreadable', messageOf(error), undefined, undefined, { cause: error });
    });
    size = (await handle.stat()).size;
    const fileStream: ReadStream = handle.createReadStream({ highWaterMark: 256 * 1024 });
    stream = fileStream;
    bytesRead = () => fileStream.bytesRead;
  }
  const close = async () => {
    if (stream !== process.stdin) stream.destroy();
  };
  const { enricher } = context;
  const before = enricher ? { ...enricher.stats } : undefined;
  try {
    const source = await openLotSource(stream, { format: context.options.format, ...(context.options.mapping ? { mapping: context.options.mapping } : {}) });
    return {
      format: source.description,
      bytesRead,
      size,
      run: (options) => importLots(source.records, { ...options, ...(enricher ? { enricher } : {}) }),
      enriched: () =>
        enricher && before ? { enriched: enricher.stats.enriched - before.enriched, decoded: enricher.stats.decoded - before.decoded } : undefined,
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

async function readWithWorker(file: string, context: FilesContext): Promise<FileReading> {
  const { options } = context;
  const source = await readFileInWorker(
    {
      file,
      format: options.format,
      ...(options.mapping ? { mapping: options.mapping } : {}),
      ...(options.enrich ? { enrichDataDir: context.dataDir } : {}),
      // The worker may run two batches ahead, so that it never waits while a batch is stored.
      maxInFlight: Math.max(8, Math.ceil((2 * options.batchSize) / PREPARE_CHUNK_SIZE)),
    },
    { onUnpacking: unpackingNotice(context.dataDir) },
  );
  return {
    format: source.description,
    bytesRead: source.bytesRead,
    size: source.size,
    run: (importOptions) => importPreparedChunks(source.chunks, importOptions),
    enriched: source.enriched,
    close: source.close,
  };
}

async function importFile(file: string, context: FilesContext): Promise<FileResult> {
  const { options } = context;
  const label = file === '-' ? 'stdin' : file;
  let reading: FileReading;
  try {
    // stdin cannot be handed to a worker thread; a file is read and parsed on one.
    reading = file === '-' || !options.worker ? await readInProcess(file, context) : await readWithWorker(file, context);
  } catch (error) {
    // Nothing of the file was stored: it cannot be opened, it is not lot data, or its first bytes
    // could not be read (a broken gzip header).
    if (!(error instanceof IngestError)) throw error;
    const refused = error.kind === 'refused' || error.kind === 'empty';
    process.stderr.write(`${label}: ${refused ? 'refused' : 'cannot read'}: ${error.message}\n`);
    return { file: label, ...emptySummary(), error: error.message, ...(refused ? { refused: true as const } : {}) };
  }
  const summary = emptySummary();
  const progress = startProgress({ label, summary, bytesRead: reading.bytesRead, totalBytes: reading.size }, { enabled: options.progress });
  try {
    await reading.run({
      lots: context.lots,
      batchSize: options.batchSize,
      summary,
      source: fileSource(file),
      signal: options.signal,
      onRejected: (rejected) => {
        progress.log(`${label}:${rejected.line}: ${rejected.reason}`);
        context.report?.write(label, rejected);
      },
    });
    const enriched = reading.enriched();
    if (enriched) progress.log(`${label}: enriched ${enriched.enriched} lots from their VIN (${enriched.decoded} VINs decoded)`);
    return { file: label, format: reading.format, ...summary };
  } catch (error) {
    if (error instanceof IngestError && error.kind === 'interrupted') return { file: label, format: reading.format, ...error.summary, interrupted: true };
    if (!(error instanceof IngestError && error.kind === 'cut-short')) throw error;
    const where = error.afterLine === 0 ? 'cannot read' : `reading stopped after line ${error.afterLine}`;
    progress.log(`${label}: ${where}: ${error.message}`);
    return { file: label, format: reading.format, ...error.summary, error: error.message };
  } finally {
    progress.stop();
    await reading.close();
  }
}
