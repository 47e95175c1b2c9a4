import { open } from 'node:fs/promises';
import { pipeline, type Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import type { Command } from 'commander';
import {
  addSummaries,
  DEFAULT_BATCH_SIZE,
  emptySummary,
  importLots,
  SourceReadError,
  type ImportSummary,
} from '../../ingest/import-lots.ts';
import { readNdjsonRecords } from '../../ingest/ndjson-records.ts';
import type { LotsRepository } from '../../repositories/lots-repository.ts';
import { CliError } from '../cli-error.ts';
import { withDatabase } from '../database.ts';
import { parsePositiveInteger } from '../options.ts';

interface ImportOptions {
  batchSize: number;
  json?: boolean;
}

interface FileResult extends ImportSummary {
  file: string;
  /** Why the file could not be read, or stopped being readable part-way. */
  error?: string;
}

const HELP_AFTER = `
Input: canonical NDJSON, one Lot JSON object per line (docs/cli.md). Each line is upserted by
(auction, lot_id); a field that is null or absent keeps the value already stored. A file name
ending in .gz is decompressed; - reads standard input.

Bad lines are reported on stderr as <file>:<line>: <field>: <reason> and skipped; the good lines
are loaded. The summary (read, inserted, updated, unchanged, skipped) goes to stdout.

Exit status:
  0  every line of every file was loaded
  1  some line was skipped, or a file could not be read (the rest was loaded)
  2  the command line is wrong`;

export function registerImportCommand(program: Command): void {
  program
    .command('import')
    .description('load auction lots from canonical NDJSON files (one Lot per line), upserting by (auction, lot_id)')
    .argument('<file...>', 'NDJSON files (.gz is decompressed; - is stdin)')
    .option('--batch-size <n>', 'lines per transaction', parsePositiveInteger, DEFAULT_BATCH_SIZE)
    .option('--json', 'print the summary as one JSON object')
    .addHelpText('after', HELP_AFTER)
    .action(async (files: string[], options: ImportOptions) => {
      const results = await withDatabase(async ({ repos }) => {
        const done: FileResult[] = [];
        for (const file of files) done.push(await importFile(file, repos.lots, options));
        return done;
      });
      const total = results.reduce<ImportSummary>((sum, result) => addSummaries(sum, result), emptySummary());
      if (options.json) {
        process.stdout.write(`${JSON.stringify({ files: results, total })}\n`);
      } else {
        for (const result of results) process.stdout.write(`${result.file}: ${describeFile(result)}\n`);
        if (results.length > 1) process.stdout.write(`total: ${describe(total)}\n`);
      }
      const unreadable = results.filter((result) => result.error !== undefined).length;
      if (total.skipped > 0 || unreadable > 0) {
        const problems = [
          total.skipped > 0 ? `${total.skipped} line${total.skipped === 1 ? '' : 's'} skipped` : '',
          unreadable > 0 ? `${unreadable} file${unreadable === 1 ? '' : 's'} not read completely` : '',
        ].filter(Boolean);
        throw new CliError(`${problems.join(', ')}; everything else was loaded.`);
      }
    });
}

function describeFile(result: FileResult): string {
  if (result.error === undefined) return describe(result);
  return result.read === 0 ? 'not read' : `${describe(result)} (stopped early: the rest of the file was not read)`;
}

function describe(summary: ImportSummary): string {
  return `read ${summary.read}, inserted ${summary.inserted}, updated ${summary.updated}, unchanged ${summary.unchanged}, skipped ${summary.skipped}`;
}

async function openInput(file: string): Promise<Readable> {
  const raw: Readable = file === '-' ? process.stdin : (await open(file, 'r')).createReadStream();
  if (!file.endsWith('.gz')) return raw;
  // pipeline destroys the gunzip stream with the file's error, so a read error reaches the reader.
  return pipeline(raw, createGunzip(), () => {});
}

async function importFile(file: string, lots: LotsRepository, options: ImportOptions): Promise<FileResult> {
  const label = file === '-' ? 'stdin' : file;
  let input: Readable;
  try {
    input = await openInput(file);
  } catch (error) {
    process.stderr.write(`${label}: cannot read: ${(error as Error).message}\n`);
    return { file: label, ...emptySummary(), error: (error as Error).message };
  }
  try {
    const summary = await importLots(readNdjsonRecords(input), {
      lots,
      batchSize: options.batchSize,
      onRejected: ({ line, reason }) => process.stderr.write(`${label}:${line}: ${reason}\n`),
    });
    return { file: label, ...summary };
  } catch (error) {
    if (!(error instanceof SourceReadError)) throw error;
    const where = error.afterLine === 0 ? 'cannot read' : `reading stopped after line ${error.afterLine}`;
    process.stderr.write(`${label}: ${where}: ${error.message}\n`);
    return { file: label, ...error.summary, error: error.message };
  } finally {
    if (input !== process.stdin) input.destroy();
  }
}
