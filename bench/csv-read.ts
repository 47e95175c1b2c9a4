/**
 * The CSV reading benchmark (`npm run bench:csv-read -- [options]`): how long reading one row of
 * Copart's 59-column CSV takes with the importer's reader (src/ingest/csv/csv-rows.ts) and with
 * csv-parse reading the whole file (the reader it replaced, and still the judge of rows that are
 * not plain), on the same file, in this process. Reading only: no mapping, no normalising, no
 * storing. See docs/benchmarks.md.
 */
import { createReadStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import type { Readable } from 'node:stream';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { readCsvRowsWithCsvParse } from '../src/ingest/csv/csv-parse-rows.ts';
import type { CsvRow } from '../src/ingest/csv/csv-row.ts';
import { readCsvRows } from '../src/ingest/csv/csv-rows.ts';
import { generateLots } from '../src/dev/seed/synthetic-lots.ts';
import { replaceDocSection } from './support/benchmarks-doc.ts';
import { COPART_HEADER, copartRow, quote, writeLines } from './support/bench-files.ts';

const DOC_FILE = path.join(fileURLToPath(new URL('..', import.meta.url)), 'docs', 'benchmarks.md');
const UNTIL = new Date('2026-01-01T00:00:00.000Z');
const USAGE = `usage: npm run bench:csv-read -- [options]

  --rows N     rows in the file (default 200000)
  --runs N     times each reader reads the file; the fastest run counts (default 3)
  --write      write the figures into docs/benchmarks.md (otherwise only print them)
`;

const log = (message: string) => process.stderr.write(`${message}\n`);
const int = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

async function timeReader(file: string, read: (input: Readable) => AsyncIterable<CsvRow>, expected: number): Promise<number> {
  const started = performance.now();
  let rows = 0;
  for await (const row of read(createReadStream(file, { highWaterMark: 256 * 1024 }))) {
    if (row.kind !== 'row') throw new Error(`line ${row.line} is ${row.kind === 'bad' ? `bad: ${row.reason}` : 'a header'}`);
    rows++;
  }
  if (rows !== expected) throw new Error(`read ${rows} rows, expected ${expected}`);
  return (performance.now() - started) / 1000;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: {
      rows: { type: 'string', default: '200000' },
      runs: { type: 'string', default: '3' },
      write: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return;
  }
  const count = Number(values.rows);
  const runs = Number(values.runs);
  if (!Number.isSafeInteger(count) || count < 1000) throw new Error(`--rows must be an integer of at least 1000; got ${values.rows}`);
  if (!Number.isSafeInteger(runs) || runs < 1) throw new Error(`--runs must be a positive integer; got ${values.runs}`);
  const command = `npm run bench:csv-read${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`;

  const dir = await mkdtemp(path.join(os.tmpdir(), 'vinhistory-bench-csv-'));
  try {
    const file = path.join(dir, 'copart.csv');
    await writeLines(file, (function* () {
      yield COPART_HEADER.map(quote).join(',');
      let index = 0;
      for (const lot of generateLots({ count, seed: 1, until: UNTIL })) yield copartRow(lot, index++);
    })());
    const bytes = (await stat(file)).size;
    // The header comes first and is not a row: skip it in both.
    const skipHeader = (read: (input: Readable) => AsyncIterable<CsvRow>) =>
      async function* (input: Readable): AsyncGenerator<CsvRow> {
        for await (const row of read(input)) if (row.kind !== 'header') yield row;
      };
    const readers = [
      { name: 'the importer\'s reader (`src/ingest/csv/csv-rows.ts`)', read: skipHeader((input) => readCsvRows(input)) },
      { name: 'csv-parse reading the whole file (`src/ingest/csv/csv-parse-rows.ts`)', read: skipHeader((input) => readCsvRowsWithCsvParse(input)) },
    ];
    const best: number[] = readers.map(() => Number.POSITIVE_INFINITY);
    for (let run = 0; run < runs; run++) {
      for (const [i, reader] of readers.entries()) {
        const seconds = await timeReader(file, reader.read, count);
        log(`${reader.name}: ${seconds.toFixed(2)} s`);
        best[i] = Math.min(best[i]!, seconds);
      }
    }
    const cpus = os.cpus();
    const body = [
      `Taken ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC with \`${command}\``,
      '',
      `- Machine: ${cpus[0]?.model.trim() ?? 'unknown CPU'}, ${cpus.length} cores, Node.js ${process.version}. Load average ${os.loadavg().map((v) => v.toFixed(2)).join(', ')} after.`,
      `- File: ${int.format(count)} rows of Copart's 59-column CSV, every field quoted (${int.format(bytes / count)} bytes a row), read from disk in 256 KiB chunks; the fastest of ${runs} runs.`,
      '',
      '| reader | seconds | rows/s | µs a row |',
      '|---|---:|---:|---:|',
      ...readers.map((reader, i) => `| ${reader.name} | ${best[i]!.toFixed(2)} | ${int.format(count / best[i]!)} | ${((best[i]! / count) * 1e6).toFixed(1)} |`),
    ].join('\n');
    process.stdout.write(`${body}\n`);
    if (values.write) {
      await replaceDocSection(DOC_FILE, 'csv-read', '## Reading CSV: `npm run bench:csv-read`', body);
      log('wrote the figures into docs/benchmarks.md');
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

try {
  await main();
} catch (error) {
  log(`bench:csv-read failed: ${(error as Error).stack ?? error}`);
  process.exitCode = 1;
}
