import { open } from 'node:fs/promises';
import type { ReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { Option, type Command } from 'commander';
import { BULK_LOAD_BATCH_SIZE, tuneForBulkLoad } from '../../ingest/bulk-load.ts';
import { createVinEnricher, type VinEnricher } from '../../ingest/enrich-from-vin.ts';
import { loadCsvMapping, MappingError, type CsvMapping } from '../../ingest/formats/csv-mapping.ts';
import {
  addSummaries,
  emptySummary,
  importLots,
  ImportInterruptedError,
  importPreparedChunks,
  SourceReadError,
  type ImportLotsOptions,
  type ImportSummary,
  type LotSink,
} from '../../ingest/import-lots.ts';
import { FileOpenError, readFileInWorker, WORKER_CHUNK_SIZE } from '../../ingest/worker/read-file-in-worker.ts';
import { FORMATS, InputRefusedError, openLotSource, type FormatName } from '../../ingest/sources/open-lot-source.ts';
import { startProgress } from '../../ingest/progress.ts';
import { SkippedReport } from '../../ingest/skipped-report.ts';
import { CliError } from '../cli-error.ts';
import { withDatabase } from '../database.ts';
import { parsePositiveInteger } from '../options.ts';

interface ImportOptions {
  batchSize: number;
  json?: boolean;
  format: FormatName;
  map?: string;
  report?: string;
  enrich?: boolean;
  progress: boolean;
  worker: boolean;
}

interface FileResult extends ImportSummary {
  file: string;
  /** What the file was read as. */
  format?: string;
  /** Why the file could not be read, or stopped being readable part-way. */
  error?: string;
  /** Set when Ctrl-C stopped the import in this file. */
  interrupted?: true;
  /** Set when the file is not lot data (an HTML page, a CSV without a mapping): nothing was read. */
  refused?: true;
}

/** Exit status of a command stopped by Ctrl-C (128 + SIGINT), as shells report it. */
const EXIT_INTERRUPTED = 130;

const HELP_AFTER = `
Input, recognised by content (a .gz file or gzip on stdin is decompressed; - reads stdin):
  canonical NDJSON (one Lot per line) or a JSON array of Lots;
  auctionsapi vehicle records (a JSON array, NDJSON or one JSON object, each vehicle with its lots);
  Copart's sales-data CSV (49- or 59-column layout, columns found by name);
  any other CSV through a mapping file (--map, e.g. examples/usa-cars.mapping.json).
Mappings: docs/import-formats.md. A file that is not lot data (an HTML page saved instead of the
CSV, an empty file) is refused.

Each lot is upserted by (auction, lot_id): a field the file leaves empty keeps the stored value.
Bad records are reported on stderr as <file>:<line>: <field>: <reason> (and in --report) and
skipped; the good ones are loaded. A file cut short keeps everything before the cut and is
reported. The summary (read, inserted, updated, unchanged, skipped) goes to stdout. Ctrl-C stops
after storing what was read; running the same command again finishes the job.

Exit status:
  0    every record of every file was loaded
  1    some record was skipped, or a file was refused or not read completely (the rest was loaded)
  2    the command line is wrong
  130  interrupted (Ctrl-C); what was read is stored`;

export function registerImportCommand(program: Command): void {
  program
    .command('import')
    .description('load auction lots from NDJSON, JSON, Copart CSV or mapped CSV files, upserting by (auction, lot_id)')
    .argument('<file...>', 'lot files (.gz is decompressed; - is stdin)')
    .addOption(new Option('--format <name>', 'read the files as this format instead of recognising it').choices(FORMATS).default('auto'))
    .option('--map <file>', 'mapping of CSV columns to Lot fields (JSON; docs/import-formats.md)')
    .option('--report <file>', 'write the skipped records to this file, one JSON object per line')
    .option('--enrich', 'fill empty vehicle fields (brand, model, year, body, engine, cylinders, fuel, drive) from the VIN, offline (NHTSA vPIC)')
    .option('--batch-size <n>', 'lots per transaction', parsePositiveInteger, BULK_LOAD_BATCH_SIZE)
    .option('--json', 'print the summary as one JSON object')
    .option('--no-progress', 'no progress bar or progress lines')
    .option('--no-worker', 'parse files on the main thread too (slower on a machine with two cores or more)')
    .addHelpText('after', HELP_AFTER)
    .action(async (files: string[], options: ImportOptions) => {
      if (options.format === 'csv' && !options.map) throw new CliError('--format csv needs a mapping: --map mapping.json', 2);
      let mapping: CsvMapping | undefined;
      try {
        mapping = options.map ? await loadCsvMapping(options.map) : undefined;
      } catch (error) {
        if (error instanceof MappingError) throw new CliError(error.message);
        throw error;
      }
      const report = options.report ? await SkippedReport.open(options.report) : null;

      // Ctrl-C (or a TERM from a supervisor) stops reading; the batch in hand is stored, then the
      // summary is printed. A second Ctrl-C quits at once: the open transaction rolls back.
      const stop = new AbortController();
      const onSignal = () => {
        if (stop.signal.aborted) process.exit(EXIT_INTERRUPTED);
        stop.abort();
        process.stderr.write('\nstopping: storing the lots read so far (Ctrl-C again to quit at once)\n');
      };
      process.on('SIGINT', onSignal);
      process.on('SIGTERM', onSignal);

      let results: FileResult[];
      try {
        results = await withDatabase(async ({ config, db, services: { repos } }) => {
          await tuneForBulkLoad(db);
          // Files are enriched on their worker thread; stdin (and --no-worker) here.
          let enricher: VinEnricher | undefined;
          if (options.enrich && (!options.worker || files.includes('-'))) {
            enricher = await createVinEnricher({
              dataDir: config.dataDir,
              onUnpack: () => process.stderr.write(`unpacking the NHTSA vPIC database into ${config.dataDir}/vpic (once, about 75 MB)\n`),
            });
          }
          try {
            const done: FileResult[] = [];
            for (const file of files) {
              if (stop.signal.aborted) break;
              done.push(await importFile(file, { lots: repos.lots, options, mapping, report, enricher, dataDir: config.dataDir, signal: stop.signal }));
            }
            return done;
          } finally {
            await enricher?.close();
          }
        });
      } finally {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
        await report?.close();
      }

      const total = results.reduce<ImportSummary>((sum, result) => addSummaries(sum, result), emptySummary());
      if (options.json) {
        process.stdout.write(`${JSON.stringify({ files: results, total })}\n`);
      } else {
        for (const result of results) process.stdout.write(`${result.file}: ${describeFile(result)}\n`);
        if (results.length > 1) process.stdout.write(`total: ${describe(total)}\n`);
      }
      if (stop.signal.aborted) {
        throw new CliError(
          `interrupted: ${total.inserted + total.updated + total.unchanged} lots stored; run the same command again to finish (lots already stored count as unchanged).`,
          EXIT_INTERRUPTED,
        );
      }
      const unreadable = results.filter((result) => result.error !== undefined).length;
      if (total.skipped > 0 || unreadable > 0) {
        const problems = [
          total.skipped > 0 ? `${total.skipped} record${total.skipped === 1 ? '' : 's'} skipped` : '',
          unreadable > 0 ? `${unreadable} file${unreadable === 1 ? '' : 's'} refused or not read completely` : '',
        ].filter(Boolean);
        throw new CliError(`${problems.join(', ')}; everything else was loaded.`);
      }
    });
}

function describeFile(result: FileResult): string {
  if (result.interrupted) return `${describe(result)} (interrupted)`;
  if (result.error === undefined) return describe(result);
  if (result.refused) return 'refused';
  return result.read === 0 ? 'not read' : `${describe(result)} (stopped early: the rest of the file was not read)`;
}

function describe(summary: ImportSummary): string {
  return `read ${summary.read}, inserted ${summary.inserted}, updated ${summary.updated}, unchanged ${summary.unchanged}, skipped ${summary.skipped}`;
}

interface ImportFileContext {
  lots: LotSink;
  options: ImportOptions;
  mapping: CsvMapping | undefined;
  report: SkippedReport | null;
  enricher: VinEnricher | undefined;
  dataDir: string;
  signal: AbortSignal;
}

/** How one file's records reach importLots: read here (stdin) or prepared by a worker thread. */
interface FileReading {
  format: string;
  bytesRead: () => number;
  size: number | null;
  run: (options: ImportLotsOptions) => Promise<ImportSummary>;
  /** With --enrich, once the file is read: lots given values from their VIN, and VINs decoded. */
  enriched: () => { enriched: number; decoded: number } | undefined;
  close: () => Promise<void>;
}

async function readInProcess(file: string, context: ImportFileContext): Promise<FileReading> {
  let stream: Readable = process.stdin;
  let bytesRead = () => 0;
  let size: number | null = null;
  if (file !== '-') {
    const handle = await open(file, 'r').catch((error: Error) => {
      throw new FileOpenError(error.message);
    });
    size = (await handle.stat()).size;
    const fileStream: ReadStream = handle.createReadStream({ highWaterMark: 256 * 1024 });
    stream = fileStream;
    bytesRead = () => fileStream.bytesRead;
  }
  const close = async () => {
    if (stream !== process.stdin) stream.destroy();
  };
  const before = context.enricher ? { ...context.enricher.stats } : undefined;
  try {
    const source = await openLotSource(stream, { format: context.options.format, ...(context.mapping ? { mapping: context.mapping } : {}) }).catch(
      (error: Error) => {
        if (error instanceof InputRefusedError || error instanceof MappingError) throw error;
        throw new FileOpenError(error.message);
      },
    );
    return {
      format: source.description,
      bytesRead,
      size,
      run: (options) => importLots(source.records, { ...options, ...(context.enricher ? { enricher: context.enricher } : {}) }),
      enriched: () =>
        context.enricher && before
          ? { enriched: context.enricher.stats.enriched - before.enriched, decoded: context.enricher.stats.decoded - before.decoded }
          : undefined,
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

async function readWithWorker(file: string, context: ImportFileContext): Promise<FileReading> {
  const source = await readFileInWorker(
    {
      file,
      format: context.options.format,
      ...(context.mapping ? { mapping: context.mapping } : {}),
      ...(context.options.enrich ? { enrichDataDir: context.dataDir } : {}),
      // The worker may run two batches ahead, so that it never waits while a batch is stored.
      maxInFlight: Math.max(8, Math.ceil((2 * context.options.batchSize) / WORKER_CHUNK_SIZE)),
    },
    { onUnpacking: () => process.stderr.write(`unpacking the NHTSA vPIC database into ${context.dataDir}/vpic (once, about 75 MB)\n`) },
  );
  return {
    format: source.description,
    bytesRead: source.bytesRead,
    size: source.size,
    run: (options) => importPreparedChunks(source.chunks, options),
    enriched: source.enriched,
    close: source.close,
  };
}

async function importFile(file: string, context: ImportFileContext): Promise<FileResult> {
  const { options } = context;
  const label = file === '-' ? 'stdin' : file;
  let reading: FileReading;
  try {
    // stdin cannot be handed to a worker thread; a file is read and parsed on one.
    reading = file === '-' || !options.worker ? await readInProcess(file, context) : await readWithWorker(file, context);
  } catch (error) {
    // Nothing of the file was stored: it cannot be opened, it is not lot data, or its first bytes
    // could not be read (a broken gzip header).
    const refused = error instanceof InputRefusedError || error instanceof MappingError;
    if (!refused && !(error instanceof FileOpenError)) throw error;
    process.stderr.write(`${label}: ${refused ? 'refused' : 'cannot read'}: ${error.message}\n`);
    return { file: label, ...emptySummary(), error: error.message, ...(refused ? { refused: true as const } : {}) };
  }
  const summary = emptySummary();
  const progress = startProgress(
    { label, summary, bytesRead: reading.bytesRead, totalBytes: reading.size },
    { enabled: options.progress && !(options.json && !process.stderr.isTTY) },
  );
  try {
    await reading.run({
      lots: context.lots,
      batchSize: options.batchSize,
      summary,
      signal: context.signal,
      onRejected: (rejected) => {
        progress.log(`${label}:${rejected.line}: ${rejected.reason}`);
        context.report?.write(label, rejected);
      },
    });
    const enriched = reading.enriched();
    if (enriched) progress.log(`${label}: enriched ${enriched.enriched} lots from their VIN (${enriched.decoded} VINs decoded)`);
    return { file: label, format: reading.format, ...summary };
  } catch (error) {
    if (error instanceof ImportInterruptedError) return { file: label, format: reading.format, ...error.summary, interrupted: true };
    if (error instanceof SourceReadError) {
      const where = error.afterLine === 0 ? 'cannot read' : `reading stopped after line ${error.afterLine}`;
      progress.log(`${label}: ${where}: ${error.message}`);
      return { file: label, format: reading.format, ...error.summary, error: error.message };
    }
    throw error;
  } finally {
    progress.stop();
    await reading.close();
  }
}
