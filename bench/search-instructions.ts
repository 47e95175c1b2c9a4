/**
 * Instructions per search, counted by valgrind (`npm run bench:search-instructions -- [options]`).
 *
 * The time benchmarks need a quiet machine; this one does not. It runs the real server (`serve`,
 * NODE_ENV=production, SQLite, the build) under `valgrind --tool=callgrind` with instrumentation off,
 * warms it up, then switches it on (`callgrind_control -i on`), zeroes the counters, sends searches
 * one after another and dumps the counters: the instructions every thread of the server
 * executed for those searches, divided by their number. Instruction counts do not depend on what
 * else the machine runs, so two trees can be compared while others work (the JIT's background
 * compilations make run-to-run spread a few per cent: compare medians of a few runs).
 *
 * The figure is instructions, not time: a cache miss or a blocking fsync costs no instructions.
 * It finds where a change added work, not how fast a search is (bench:search says that).
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { freePort } from './support/children.ts';
import { prepareSearchDatabase } from './support/search-data.ts';

const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));
const HOST = '127.0.0.1';

const USAGE = `usage: npm run bench:search-instructions -- [options]

  --lots N          synthetic lots to load (default 100000)
  --data-dir DIR    keep the database in DIR and reuse it (as bench:search's --data-dir)
  --warmup N        searches before counting (default 2000)
  --searches N      searches counted (default 2000)
  --runs N          server runs, each counted apart (default 1)
`;

function parseSettings(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    options: {
      lots: { type: 'string', default: '100000' },
      'data-dir': { type: 'string' },
      warmup: { type: 'string', default: '2000' },
      searches: { type: 'string', default: '2000' },
      runs: { type: 'string', default: '1' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    process.exit(0);
  }
  const int = (name: string, text: string) => {
    const value = Number(text);
    if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} must be a positive integer\n${USAGE}`);
    return value;
  };
  return {
    lots: int('lots', values.lots),
    seed: 1,
    dataDir: values['data-dir'] ?? null,
    warmup: int('warmup', values.warmup),
    searches: int('searches', values.searches),
    runs: int('runs', values.runs),
  };
}

function run(command: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    // valgrind names its control pipes after $HOST, which the server's environment sets: the
    // control command must look for the same names.
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, HOST } });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`${command} ${args.join(' ')} exited ${code}: ${out}`))));
  });
}

async function searchMany(baseUrl: string, token: string, vins: string[], count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const response = await fetch(`${baseUrl}/api/v1/search?vin=${vins[i % vins.length]}`, { headers: { authorization: token } });
    await response.arrayBuffer();
    if (response.status !== 200 && response.status !== 404) throw new Error(`search answered ${response.status}`);
  }
}

/** The summed `summary:` lines of callgrind's dump files: the instructions counted, all threads. */
async function countedInstructions(dir: string): Promise<number> {
  let total = 0;
  for (const name of await readdir(dir)) {
    if (!name.startsWith('callgrind.out')) continue;
    const text = await readFile(path.join(dir, name), 'utf8');
    // Only the explicit dump (callgrind_control -d, file `.1`) holds the counted searches; the
    // one at exit holds the shutdown.
    if (!/\.\d+$/.test(name)) continue;
    for (const match of text.matchAll(/^summary:\s+(\d+)/gm)) total += Number(match[1]);
  }
  return total;
}

async function onceUnderCallgrind(settings: ReturnType<typeof parseSettings>, dataDir: string, log: (m: string) => void): Promise<number> {
  const port = await freePort();
  const baseUrl = `http://${HOST}:${port}`;
  const env: Record<string, string> = { NODE_ENV: 'production', DATA_DIR: dataDir, PORT: String(port), HOST, PUBLIC_BASE_URL: baseUrl, LOG_LEVEL: 'warn' };
  const { vins, token } = await prepareSearchDatabase({ lots: settings.lots, seed: settings.seed, dataDir }, env, log);
  const outDir = await mkdtemp(path.join(os.tmpdir(), 'vinhistory-callgrind-'));
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env };
  delete childEnv.DATABASE_URL;
  delete childEnv.REDIS_URL;
  const server = spawn(
    'valgrind',
    ['--tool=callgrind', '--instr-atstart=no', '--trace-children=no', `--callgrind-out-file=${outDir}/callgrind.out.%p`, process.execPath, 'bin/vinhistory.js', 'serve'],
    { cwd: REPO_ROOT, env: childEnv, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  server.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-8192)));
  const exited = new Promise<void>((resolve) => server.once('exit', () => resolve()));
  try {
    const deadline = Date.now() + 300_000;
    for (;;) {
      try {
        if ((await fetch(`${baseUrl}/healthz`)).ok) break;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) throw new Error(`the server did not start under valgrind:\n${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    log(`warming up with ${settings.warmup} searches`);
    await searchMany(baseUrl, token, vins, settings.warmup);
    const pid = String(server.pid);
    // Instrumenting starts afresh (valgrind translates the code again): a few searches under it
    // first, then the counters are zeroed, the searches counted, and the counters dumped.
    await run('callgrind_control', ['-i', 'on', pid]);
    await searchMany(baseUrl, token, vins, 50);
    await run('callgrind_control', ['-z', pid]);
    await searchMany(baseUrl, token, vins.slice(settings.warmup % vins.length).concat(vins), settings.searches);
    await run('callgrind_control', ['-d', pid]);
    server.kill('SIGTERM');
    await exited;
    return (await countedInstructions(outDir)) / settings.searches;
  } finally {
    if (server.exitCode === null) server.kill('SIGKILL');
    if (!process.env.KEEP_CALLGRIND) await rm(outDir, { recursive: true, force: true });
    else log(`kept ${outDir}`);
  }
}

async function main(): Promise<void> {
  const settings = parseSettings(process.argv.slice(2));
  const log = (message: string) => process.stderr.write(`${message}\n`);
  const tempDir = await mkdtemp(path.join(os.tmpdir(), 'vinhistory-bench-instructions-'));
  try {
    const dataDir = settings.dataDir ?? path.join(tempDir, 'data');
    const figures: number[] = [];
    for (let i = 0; i < settings.runs; i++) {
      const perSearch = await onceUnderCallgrind(settings, dataDir, log);
      figures.push(perSearch);
      log(`run ${i + 1}: ${Math.round(perSearch).toLocaleString('en-US')} instructions per search`);
    }
    const sorted = [...figures].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)]!;
    process.stdout.write(
      `${JSON.stringify({ lots: settings.lots, searches: settings.searches, runs: figures.map(Math.round), median: Math.round(median) })}\n`,
    );
  } finally {
    await rm(tempDir, { recursive: true, force: true });
  }
}

await main();
