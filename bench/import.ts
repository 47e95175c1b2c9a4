/**
 * The import benchmark (`npm run bench:import -- [options]`): how fast `vinhistory import` loads
 * 1,000,000 synthetic lots into SQLite from canonical NDJSON and from Copart's CSV layout, with its
 * peak memory, beside the ceiling measured in the same run: the same rows inserted with one bare
 * prepared statement in large transactions, nothing else. See docs/benchmarks.md.
 *
 * Each measurement runs in a child process of its own (this file with --child), so that its peak
 * memory is its own and nothing of the other runs warms its caches.
 */
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import BetterSqlite3 from 'better-sqlite3';
import { generateLots } from '../src/dev/seed/synthetic-lots.ts';
import { replaceDocSection } from './support/benchmarks-doc.ts';
import { COPART_HEADER, copartRow, quote, writeLines } from './support/bench-files.ts';
import { reimportBench, REIMPORT_USAGE } from './support/reimport.ts';

const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));
const DOC_FILE = path.join(REPO_ROOT, 'docs', 'benchmarks.md');
const SELF = fileURLToPath(import.meta.url);
const RUN_TS = path.join(REPO_ROOT, 'bin', 'run-ts.js');
/** Sale dates relative to a fixed day, so that every run writes the same files. */
const UNTIL = new Date('2026-01-01T00:00:00.000Z');
const TARGET_RATE = 50_000;
const TARGET_RATIO = 0.5;
const CEILING_TRANSACTION = 10_000;

const USAGE = `usage: npm run bench:import -- [options]

  --lots N     synthetic lots in each file (default 1000000)
  --seed N     seed of the synthetic lots (default 1)
  --write      write the figures into docs/benchmarks.md (otherwise only print them)
${REIMPORT_USAGE}`;

const log = (message: string) => process.stderr.write(`${message}\n`);
const int = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
const mib = (kb: number) => `${int.format(kb / 1024)} MiB`;

// ---------------------------------------------------------------------------------------------
// Child processes.

interface ChildFigures {
  seconds: number;
  /** CPU time of the import, all threads (imports only). */
  cpuSeconds?: number;
  maxRssKb: number;
  rows: number;
  summary?: Record<string, number>;
}

/**
 * The ceiling: rows built beforehand (not timed), through one bare prepared INSERT. The rows are
 * those of the synthetic lots, or, with `from`, those an import stored in another database (a
 * Copart row holds less than the lot it was written from: one photo, no price), so that each
 * import is set against the rows it really writes.
 */
async function ceilingChild(dataDir: string, rowsOf: { count: number; seed: number } | { from: string }): Promise<ChildFigures> {
  // Imported here, not at the top: the --reimport mode runs against older trees (bench/support/reimport.ts), whose storage modules differ.
  const { migrateToLatest, openDatabase } = await import('../src/storage/database.ts');
  const { BULK_LOAD_CHECKPOINT_PAGES } = await import('../src/storage/dialects/sqlite/lots-upsert.ts');
  const { UNNAMED_SOURCE } = await import('../src/domain/lot-history.ts');
  const { LOT_COLUMNS, rowParams } = await import('../src/storage/lot-rows.ts');
  const file = path.join(dataDir, 'vinhistory.sqlite');
  const db = await openDatabase({ kind: 'sqlite', file });
  await migrateToLatest(db);
  await db.close();
  // The connection settings of the app (src/storage/dialects/sqlite/connection.ts) and of an import (src/storage/dialects/sqlite/lots-upsert.ts).
  const raw = new BetterSqlite3(file);
  raw.pragma('journal_mode = WAL');
  raw.pragma('synchronous = NORMAL');
  raw.pragma(`wal_autocheckpoint = ${BULK_LOAD_CHECKPOINT_PAGES}`);
  const insert = raw.prepare(`insert into lots (${LOT_COLUMNS.map((c) => `"${c}"`).join(', ')}) values (${LOT_COLUMNS.map(() => '?').join(', ')})`);
  const insertAll = raw.transaction((rows: unknown[][]) => {
    for (const row of rows) insert.run(row);
  });
  const at = new Date().toISOString();
  let seconds = 0;
  let count = 0;
  let rows: unknown[][] = [];
  const flush = () => {
    const started = performance.now();
    insertAll(rows);
    seconds += (performance.now() - started) / 1000;
    count += rows.length;
    rows = [];
  };
  const add = (row: unknown[]) => {
    rows.push(row);
    if (rows.length === CEILING_TRANSACTION) flush();
  };
  if ('from' in rowsOf) {
    const source = new BetterSqlite3(rowsOf.from, { readonly: true });
    const select = source.prepare(`select ${LOT_COLUMNS.map((c) => `"${c}"`).join(', ')} from lots order by rowid`).raw();
    for (const row of select.iterate() as Iterable<unknown[]>) add(row);
    source.close();
  } else {
    for (const lot of generateLots({ count: rowsOf.count, seed: rowsOf.seed, until: UNTIL })) add(rowParams(lot, at, UNNAMED_SOURCE));
  }
  if (rows.length > 0) flush();
  // What is left in the WAL is part of the cost of writing: the import pays it when it closes.
  const started = performance.now();
  raw.close();
  seconds += (performance.now() - started) / 1000;
  return { seconds, maxRssKb: process.resourceUsage().maxRSS, rows: count };
}

/**
 * `vinhistory import --json --batch-size 10000 <file>` in this process, timed from the command's
 * start to its end: batches of 10,000, as into a database no server is using (the default of 250
 * keeps a serving database's write lock short, at about half the speed: docs/cli.md).
 */
async function importChild(file: string, batchSize = '10000'): Promise<ChildFigures> {
  const { main } = await import('../src/cli/main.ts');
  let captured = '';
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((chunk: string | Uint8Array) => {
    captured += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString();
    return true;
  });
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  try {
    await main(['node', 'vinhistory', 'import', '--json', '--no-progress', '--batch-size', batchSize, file]);
  } finally {
    process.stdout.write = write;
  }
  const seconds = (performance.now() - started) / 1000;
  // Every thread of the process (the reading worker too): less disturbed by other work on the machine than the wall clock.
  const cpu = process.cpuUsage(cpuBefore);
  const cpuSeconds = (cpu.user + cpu.system) / 1e6;
  if (process.exitCode) throw new Error(`the import failed (exit ${process.exitCode}): ${captured}`);
  const { total } = JSON.parse(captured) as { total: Record<string, number> };
  return { seconds, cpuSeconds, maxRssKb: process.resourceUsage().maxRSS, rows: total.read!, summary: total };
}

function runChild(args: string[], dataDir: string): Promise<ChildFigures> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [RUN_TS, SELF, '--child', ...args], {
      env: { ...process.env, DATA_DIR: dataDir, NODE_ENV: 'production', PUBLIC_BASE_URL: 'http://localhost', LOG_LEVEL: 'warn', DATABASE_URL: '' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`child ${args.join(' ')} exited with ${code}`));
      resolve(JSON.parse(out.trim().split('\n').at(-1)!) as ChildFigures);
    });
  });
}

async function countLots(dataDir: string): Promise<number> {
  const raw = new BetterSqlite3(path.join(dataDir, 'vinhistory.sqlite'), { readonly: true });
  try {
    return (raw.prepare('select count(*) as n from lots').get() as { n: number }).n;
  } finally {
    raw.close();
  }
}

const loadAverage = () => os.loadavg().map((value) => value.toFixed(2)).join(', ');

// ---------------------------------------------------------------------------------------------

interface Run {
  name: string;
  figures: ChildFigures;
  /** The ceiling this run is set against (a ceiling run: itself). */
  against: ChildFigures;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: {
      lots: { type: 'string', default: '1000000' },
      seed: { type: 'string', default: '1' },
      write: { type: 'boolean', default: false },
      child: { type: 'string' },
      'rows-from': { type: 'string' },
      reimport: { type: 'boolean', default: false },
      rounds: { type: 'string', default: '1' },
      phase: { type: 'string' },
      instructions: { type: 'boolean', default: false },
      cpu: { type: 'boolean', default: false },
      'batch-size': { type: 'string', default: '10000' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    allowPositionals: true,
    strict: true,
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return;
  }
  const count = Number(values.lots);
  const seed = Number(values.seed);
  if (!Number.isSafeInteger(count) || count < 1000) throw new Error(`--lots must be an integer of at least 1000; got ${values.lots}`);
  if (!Number.isSafeInteger(seed) || seed < 0) throw new Error(`--seed must be a whole number; got ${values.seed}`);

  if (values.child !== undefined) {
    const figures =
      values.child === 'ceiling'
        ? await ceilingChild(process.env.DATA_DIR!, values['rows-from'] ? { from: values['rows-from'] } : { count, seed })
        : await importChild(values.child, values['batch-size']);
    process.stdout.write(`${JSON.stringify(figures)}\n`);
    return;
  }

  if (values.reimport) {
    await reimportBench({
      count,
      seed,
      rounds: Number(values.rounds),
      batchSize: Number(values['batch-size']),
      phase: values.phase,
      instructions: values.instructions,
      cpu: values.cpu,
      self: SELF,
      runTs: RUN_TS,
    });
    return;
  }

  const command = `npm run bench:import${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`;
  const tempDir = await mkdtemp(path.join(os.tmpdir(), 'vinhistory-bench-import-'));
  process.once('SIGINT', () => {
    rmSync(tempDir, { recursive: true, force: true });
    process.exit(130);
  });
  try {
    const loadBefore = loadAverage();
    const ndjson = path.join(tempDir, 'lots.ndjson');
    const csv = path.join(tempDir, 'copart.csv');
    const small = path.join(tempDir, 'lots-small.ndjson');
    log(`writing ${int.format(count)} synthetic lots (seed ${seed}) as NDJSON and as Copart CSV...`);
    let started = performance.now();
    await writeLines(ndjson, (function* () {
      for (const lot of generateLots({ count, seed, until: UNTIL })) yield JSON.stringify(lot);
    })());
    await writeLines(csv, (function* () {
      yield COPART_HEADER.map(quote).join(',');
      let index = 0;
      for (const lot of generateLots({ count, seed, until: UNTIL })) yield copartRow(lot, index++);
    })());
    await writeLines(small, (function* () {
      for (const lot of generateLots({ count: Math.round(count / 10), seed, until: UNTIL })) yield JSON.stringify(lot);
    })());
    const sizes = { ndjson: (await stat(ndjson)).size, csv: (await stat(csv)).size, small: (await stat(small)).size };
    log(`  done in ${((performance.now() - started) / 1000).toFixed(0)} s: NDJSON ${mib(sizes.ndjson / 1024)}, CSV ${mib(sizes.csv / 1024)}`);

    const runs: Run[] = [];
    /** One child run on a fresh DATA_DIR; `keep` leaves its database for a later run to read. */
    const measure = async (name: string, args: string[], against: ChildFigures | null, expected: number, keep = false) => {
      const dataDir = await mkdtemp(path.join(tempDir, 'data-'));
      log(`${name}...`);
      started = performance.now();
      const figures = await runChild(args, dataDir);
      const stored = await countLots(dataDir);
      if (stored !== expected) throw new Error(`${name}: the database holds ${stored} lots, expected ${expected}`);
      log(`  ${int.format(figures.rows / figures.seconds)} lots/s, ${figures.seconds.toFixed(1)} s, peak ${mib(figures.maxRssKb)} (load average ${loadAverage()})`);
      const run: Run = { name, figures, against: against ?? figures };
      runs.push(run);
      if (!keep) await rm(dataDir, { recursive: true, force: true });
      return { figures, run, database: path.join(dataDir, 'vinhistory.sqlite') };
    };
    const ceiling = (await measure('ceiling: the lots, bare prepared INSERT, 10,000 rows a transaction', ['ceiling', '--lots', String(count), '--seed', String(seed)], null, count)).figures;
    const fromNdjson = (await measure('`vinhistory import` canonical NDJSON', [ndjson], ceiling, count)).figures;
    // The Copart run's ceiling is measured after it, on the rows it stored: its own ratio follows it.
    const csvRun = await measure('`vinhistory import` Copart CSV (59 columns)', [csv], null, count, true);
    const csvCeiling = (await measure('ceiling: the rows the Copart import stored, the same way', ['ceiling', '--lots', String(count), '--rows-from', csvRun.database], null, count)).figures;
    await rm(path.dirname(csvRun.database), { recursive: true, force: true });
    csvRun.run.against = csvCeiling;
    const fromCsv = csvRun.figures;
    const fromSmall = (await measure(`\`vinhistory import\` canonical NDJSON, ${int.format(count / 10)} lots (memory check)`, [small], ceiling, Math.round(count / 10))).figures;
    const loadAfter = loadAverage();

    const body = report({ command, count, seed, sizes, runs, ceiling, csvCeiling, fromNdjson, fromCsv, fromSmall, loadBefore, loadAfter });
    process.stdout.write(`${body}\n`);
    if (values.write) {
      await replaceDocSection(DOC_FILE, 'import', '## Import: `npm run bench:import`', body);
      log(`wrote the figures into ${path.relative(process.cwd(), DOC_FILE)}`);
    }
  } finally {
    await rm(tempDir, { recursive: true, force: true });
  }
}

function report(r: {
  command: string;
  count: number;
  seed: number;
  sizes: { ndjson: number; csv: number; small: number };
  runs: Run[];
  ceiling: ChildFigures;
  csvCeiling: ChildFigures;
  fromNdjson: ChildFigures;
  fromCsv: ChildFigures;
  fromSmall: ChildFigures;
  loadBefore: string;
  loadAfter: string;
}): string {
  const cpus = os.cpus();
  const machine = `${cpus[0]?.model.trim() ?? 'unknown CPU'}, ${cpus.length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB RAM, ${os.type()} ${os.release()}, Node.js ${process.version}`;
  const rate = (f: ChildFigures) => f.rows / f.seconds;
  const verdict = (f: ChildFigures, ceiling: ChildFigures) => {
    const share = rate(f) / rate(ceiling);
    const shareMet = share >= TARGET_RATIO ? 'met' : 'missed';
    const rateMet = rate(f) >= TARGET_RATE ? 'met' : rate(ceiling) < TARGET_RATE ? 'missed: above the ceiling of this machine' : 'missed';
    return `${(share * 100).toFixed(0)}% of its ceiling (target ${TARGET_RATIO * 100}%: **${shareMet}**), ${int.format(rate(f))} lots/s (target ${int.format(TARGET_RATE)}: **${rateMet}**)`;
  };
  const row = ({ name, figures, against }: Run) =>
    `| ${name} | ${int.format(figures.rows)} | ${figures.seconds.toFixed(1)} | ${int.format(rate(figures))} | ${((rate(figures) / rate(against)) * 100).toFixed(0)}% | ${mib(figures.maxRssKb)} |`;
  return [
    `Taken ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC with \`${r.command}\``,
    '',
    `- Machine: ${machine}. Load average ${r.loadBefore} before and ${r.loadAfter} after (other work on the machine shares its cores).`,
    `- Data: ${int.format(r.count)} synthetic lots (seed ${r.seed}, \`src/dev/seed/synthetic-lots.ts\`), as canonical NDJSON (${mib(r.sizes.ndjson / 1024)}) and as Copart's 59-column CSV (${mib(r.sizes.csv / 1024)}, each lot under a Copart lot number of its own). Each run loads a fresh SQLite database; the lots stored are counted after each.`,
    '- Import: `vinhistory import --json --no-progress --batch-size 10000 <file>` in a process of its own, timed from the command\'s start (opening the database) to its end (the last commit and closing), without Node\'s start-up. A worker thread reads, parses and normalises the file; the main thread stores batches of 10,000 lots (a bulk load into a database no server is using; the default of 250 keeps a serving database\'s write lock short: docs/cli.md).',
    `- Ceilings: rows built beforehand (not timed), inserted with one prepared \`INSERT\` (no conflict handling, no merge, no count) in transactions of ${int.format(CEILING_TRANSACTION)} rows, with the same connection settings, the closing checkpoint timed too: the rows of the synthetic lots (for the NDJSON imports), and the rows the Copart import stored, read back from its database (for the Copart import: a Copart row carries one photo where the lot had up to ten, and no price).`,
    '',
    '| run | lots | seconds | lots/s | of its ceiling | peak memory (RSS) |',
    '|---|---:|---:|---:|---:|---:|',
    ...r.runs.map(row),
    '',
    `- NDJSON: ${verdict(r.fromNdjson, r.ceiling)}.`,
    `- Copart CSV: ${verdict(r.fromCsv, r.csvCeiling)}.`,
    `- Memory: peak ${mib(r.fromNdjson.maxRssKb)} for ${int.format(r.count)} lots against ${mib(r.fromSmall.maxRssKb)} for a tenth of them (${(r.fromNdjson.maxRssKb / r.fromSmall.maxRssKb).toFixed(2)} times as much for ten times the lots).`,
  ].join('\n');
}

try {
  await main();
} catch (error) {
  log(`bench:import failed: ${(error as Error).stack ?? error}`);
  process.exitCode = 1;
}
