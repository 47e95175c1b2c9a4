import { Option, type Command } from 'commander';
import { loadCsvMapping, MappingError, type CsvMapping } from '../../ingest/formats/csv-mapping.ts';
import type { FileResult } from '../../ingest/import-files.ts';
import { BULK_LOAD_BATCH_SIZE } from '../../ingest/import-lots.ts';
import { addSummaries, emptySummary, type ImportSummary } from '../../ingest/import-summary.ts';
import { FORMATS, type FormatName } from '../../ingest/sources/open-lot-source.ts';
import { CliError } from '../cli-error.ts';
import { mayDeferIndexes, withDatabase } from '../database.ts';
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
        results = await withDatabase(({ config, services }) =>
          services.ingest.importFiles(files, {
            deferIndexes: mayDeferIndexes(config),
            format: options.format,
            mapping,
            batchSize: options.batchSize,
            enrich: options.enrich === true,
            worker: options.worker,
            progress: options.progress && !(options.json && !process.stderr.isTTY),
            reportFile: options.report,
            signal: stop.signal,
          }),
        );
      } finally {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
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
        // A lone missing file loaded nothing: "everything else was loaded" would claim otherwise.
        const loaded = total.inserted + total.updated + total.unchanged;
        throw new CliError(`${problems.join(', ')}; ${loaded > 0 ? 'everything else was loaded' : 'nothing was loaded'}.`);
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
