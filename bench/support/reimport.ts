/**
 * Re-imports for `npm run bench:import -- --reimport`: what an import costs when its lots are
 * already stored (lot history's case, issue 29), beside a fresh import of the same lots.
 *
 * Three phases, each `vinhistory import --json --no-progress --batch-size B <file>` in a process of
 * its own on one SQLite database: `fresh` (an empty database), `unchanged` (the same file again:
 * every lot as stored), `changed` (every third lot with a new price, the rest as stored).
 *
 * With --instructions each phase runs under `valgrind --tool=callgrind` at two sizes (a quarter of
 * --lots and --lots), the phases before it without valgrind; the difference of the two totals over
 * the lots between them is one lot's cost (start-up, migrations and the first compile cancel out).
 *
 * This file needs nothing of the storage code (only the CLI, through bench/import.ts --child, and
 * the synthetic lots), so that it can be copied into a checkout of an older commit and run there.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { generateLots } from '../../src/dev/seed/synthetic-lots.ts';
import { writeLines } from './bench-files.ts';

export const REIMPORT_USAGE = `
Re-imports (lots already stored):
  --reimport       instead of the above: a fresh import of the lots into an empty database, then
                   the same file again (every lot unchanged), then a file in which every third lot
                   has a new price; prints lots/s of each phase
  --rounds N       with --reimport: run the three phases N times, each on a new database (default 1)
  --batch-size N   with --reimport: lots per transaction (default 10000, as the import bench)
  --instructions   with --reimport: instructions per lot under valgrind's callgrind instead of time:
                   each phase at a quarter of --lots and at --lots (try --lots 8000)
  --cpu            with --reimport: CPU time per lot the same way (two sizes, no valgrind), each
                   size --rounds times, the medians' difference: less disturbed by a busy machine
                   than lots/s, and seconds instead of the hour callgrind takes there
  --phase P        with --instructions or --cpu: only this phase (fresh, unchanged or changed)
`;

const PHASES = ['fresh', 'unchanged', 'changed'] as const;
type Phase = (typeof PHASES)[number];
/** Sale dates relative to a fixed day, so that every run writes the same files (as bench/import.ts). */
const UNTIL = new Date('2026-01-01T00:00:00.000Z');

interface Figures {
  seconds: number;
  cpuSeconds: number;
  maxRssKb: number;
  rows: number;
  summary?: Record<string, number>;
}

const log = (message: string) => process.stderr.write(`${message}\n`);
const int = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
const loadAverage = () => os.loadavg().map((value) => value.toFixed(2)).join(', ');

async function writeFiles(dir: string, count: number, seed: number): Promise<{ same: string; changed: string }> {
  const same = path.join(dir, `lots-${count}.ndjson`);
  const changed = path.join(dir, `lots-${count}-changed.ndjson`);
  await writeLines(same, (function* () {
    for (const lot of generateLots({ count, seed, until: UNTIL })) yield JSON.stringify(lot);
  })());
  await writeLines(changed, (function* () {
    let index = 0;
    for (const lot of generateLots({ count, seed, until: UNTIL })) {
      // A new price on every third lot: the final price arriving or moving, the commonest change of a day's pull.
      yield JSON.stringify(index++ % 3 === 0 ? { ...lot, price: (lot.price ?? 1000) + 125 } : lot);
    }
  })());
  return { same, changed };
}

interface ChildOptions {
  self: string;
  runTs: string;
  batchSize: number;
  dataDir: string;
  /** Run under callgrind, writing its files into this folder. */
  callgrindDir?: string;
}

function runImport(file: string, options: ChildOptions): Promise<Figures> {
  const node = [options.runTs, options.self, '--child', file, '--batch-size', String(options.batchSize)];
  const [command, args] = options.callgrindDir
    ? ['valgrind', ['--tool=callgrind', '--trace-children=no', `--callgrind-out-file=${options.callgrindDir}/callgrind.out.%p`, process.execPath, ...node]]
    : [process.execPath, node];
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      env: { ...process.env, DATA_DIR: options.dataDir, NODE_ENV: 'production', PUBLIC_BASE_URL: 'http://localhost', LOG_LEVEL: 'warn', DATABASE_URL: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`import of ${file} exited with ${code}:\n${err.slice(-4000)}`));
      resolve(JSON.parse(out.trim().split('\n').at(-1)!) as Figures);
    });
  });
}

/** What each phase must have done to every lot: the check that the phase measured what it says. */
function check(phase: Phase, count: number, figures: Figures): void {
  const s = figures.summary ?? {};
  const expected: Record<Phase, Record<string, number>> = {
    fresh: { inserted: count, updated: 0, unchanged: 0 },
    unchanged: { inserted: 0, updated: 0, unchanged: count },
    changed: { inserted: 0, updated: Math.ceil(count / 3), unchanged: count - Math.ceil(count / 3) },
  };
  for (const [key, value] of Object.entries(expected[phase])) {
    if (s[key] !== value) throw new Error(`${phase}: ${key} ${s[key]}, expected ${value} (${JSON.stringify(s)})`);
  }
}

async function callgrindTotal(dir: string): Promise<number> {
  let total = 0;
  for (const name of await readdir(dir)) {
    if (!name.startsWith('callgrind.out')) continue;
    const text = await readFile(path.join(dir, name), 'utf8');
    for (const match of text.matchAll(/^summary:\s+(\d+)/gm)) total += Number(match[1]);
  }
  return total;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

export async function reimportBench(options: {
  count: number;
  seed: number;
  rounds: number;
  batchSize: number;
  phase: string | undefined;
  instructions: boolean;
  cpu: boolean;
  self: string;
  runTs: string;
}): Promise<void> {
  const { count, seed, batchSize } = options;
  if (!Number.isSafeInteger(options.rounds) || options.rounds < 1) throw new Error('--rounds must be a positive integer');
  if (!Number.isSafeInteger(batchSize) || batchSize < 1) throw new Error('--batch-size must be a positive integer');
  if (options.phase !== undefined && !(PHASES as readonly string[]).includes(options.phase)) throw new Error(`--phase must be one of ${PHASES.join(', ')}`);
  const phases = options.phase === undefined ? PHASES : [options.phase as Phase];
  const cpus = os.cpus();
  const tempDir = await mkdtemp(path.join(os.tmpdir(), 'vinhistory-bench-reimport-'));
  try {
    log(`tree: ${process.cwd()}; ${cpus[0]?.model.trim() ?? 'unknown CPU'}, ${cpus.length} cores, Node.js ${process.version}; load average ${loadAverage()}`);
    if (options.instructions || options.cpu) {
      const unit = options.instructions ? 'instructions' : 'CPU µs';
      const rounds = options.instructions ? 1 : options.rounds;
      const sizes = [Math.round(count / 4), count];
      const totals = new Map<string, number[]>();
      for (const size of sizes) {
        const files = await writeFiles(tempDir, size, seed);
        for (let round = 1; round <= rounds; round++) {
          for (const phase of phases) {
            const dataDir = await mkdtemp(path.join(tempDir, 'data-'));
            const callgrindDir = options.instructions ? await mkdtemp(path.join(tempDir, 'callgrind-')) : undefined;
            const child = { self: options.self, runTs: options.runTs, batchSize, dataDir };
            if (phase !== 'fresh') check('fresh', size, await runImport(files.same, child));
            log(`${phase}, ${int.format(size)} lots${callgrindDir ? ', under callgrind' : ''}...`);
            const figures = await runImport(phase === 'changed' ? files.changed : files.same, { ...child, ...(callgrindDir ? { callgrindDir } : {}) });
            check(phase, size, figures);
            const total = callgrindDir ? await callgrindTotal(callgrindDir) : figures.cpuSeconds * 1e6;
            const key = `${phase}/${size}`;
            totals.set(key, [...(totals.get(key) ?? []), total]);
            log(`  ${int.format(total)} ${unit} (load average ${loadAverage()})`);
            await rm(dataDir, { recursive: true, force: true });
            if (callgrindDir) await rm(callgrindDir, { recursive: true, force: true });
          }
        }
      }
      const per = options.instructions ? 'instructions per lot' : 'CPU µs per lot';
      process.stdout.write(`| phase | ${unit}, ${int.format(sizes[0]!)} lots | ${unit}, ${int.format(sizes[1]!)} lots | ${per} |\n|---|---:|---:|---:|\n`);
      for (const phase of phases) {
        const small = median(totals.get(`${phase}/${sizes[0]}`)!);
        const large = median(totals.get(`${phase}/${sizes[1]}`)!);
        const perLot = (large - small) / (sizes[1]! - sizes[0]!);
        process.stdout.write(`| ${phase} | ${int.format(small)} | ${int.format(large)} | ${options.instructions ? int.format(perLot) : perLot.toFixed(1)} |\n`);
      }
      return;
    }
    const files = await writeFiles(tempDir, count, seed);
    const rates = new Map<Phase, number[]>(PHASES.map((phase) => [phase, []]));
    const cpuCosts = new Map<Phase, number[]>(PHASES.map((phase) => [phase, []]));
    process.stdout.write(
      `| round | fresh lots/s | unchanged re-import lots/s | 1/3 changed lots/s | fresh CPU µs/lot | unchanged CPU µs/lot | 1/3 changed CPU µs/lot | load average after |\n|---:|---:|---:|---:|---:|---:|---:|---|\n`,
    );
    for (let round = 1; round <= options.rounds; round++) {
      const dataDir = await mkdtemp(path.join(tempDir, 'data-'));
      const child = { self: options.self, runTs: options.runTs, batchSize, dataDir };
      const cells: string[] = [];
      const cpuCells: string[] = [];
      for (const phase of PHASES) {
        const figures = await runImport(phase === 'changed' ? files.changed : files.same, child);
        check(phase, count, figures);
        const rate = figures.rows / figures.seconds;
        const cpu = (figures.cpuSeconds * 1e6) / figures.rows;
        rates.get(phase)!.push(rate);
        cpuCosts.get(phase)!.push(cpu);
        cells.push(int.format(rate));
        cpuCells.push(int.format(cpu));
        log(`round ${round}, ${phase}: ${int.format(rate)} lots/s, ${figures.seconds.toFixed(2)} s, ${int.format(cpu)} µs CPU a lot`);
      }
      process.stdout.write(`| ${round} | ${cells.join(' | ')} | ${cpuCells.join(' | ')} | ${loadAverage()} |\n`);
      await rm(dataDir, { recursive: true, force: true });
    }
    if (options.rounds > 1) {
      const medians = (values: Map<Phase, number[]>) => PHASES.map((phase) => int.format(median(values.get(phase)!))).join(' | ');
      process.stdout.write(`| median | ${medians(rates)} | ${medians(cpuCosts)} | |\n`);
    }
  } finally {
    await rm(tempDir, { recursive: true, force: true });
  }
}
