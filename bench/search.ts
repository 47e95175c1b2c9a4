/**
 * The search benchmark (`npm run bench:search -- [options]`): searches per second and latency of
 * the real server on SQLite with 100,000 synthetic lots, beside a bare Fastify route that returns
 * a report of the same size (the ceiling of the HTTP stack on this machine), in the same run.
 * See docs/benchmarks.md for the method and the latest figures.
 */
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { prepareSearchDatabase } from './support/search-data.ts';
import { replaceDocSection } from './support/benchmarks-doc.ts';
import { LOAD_OPTIONS, loadSettings, UsageError, type LoadSettings } from './support/load-settings.ts';
import { Child, freePort, waitUntilReady } from './support/children.ts';
import { withCpu, type Measured } from './support/cpu-meter.ts';
import { formatProfileSummary, summariseCpuProfile } from './support/cpu-profile.ts';
import type { LatencySummary } from './support/latencies.ts';
import { pacedLoad, type PacedLoadResult } from './support/paced-load.ts';
import { measureThroughput, stopThroughputRun, type ThroughputResult } from './support/throughput.ts';

const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));
const DOC_FILE = path.join(REPO_ROOT, 'docs', 'benchmarks.md');
const HOST = '127.0.0.1';
/** Real responses fetched to choose the ceiling's body: the median size stands for them all. */
const BODY_SAMPLES = 51;
/** Issue 10: at least 0.3 of the ceiling (aim 0.4). */
const TARGET_RATIO = 0.3;
const TARGET_P99_MS = 10;

const USAGE = `usage: npm run bench:search -- [options]

  --lots N          synthetic lots to load (default 100000)
  --duration S      seconds of each measured run (default 10)
  --warmup S        seconds of warm-up before each throughput run (default 2)
  --connections N   autocannon connections of the throughput runs (default 10)
  --rate N          requests per second of the fixed-rate run (default 1000)
  --seed N          seed of the synthetic lots (default 1)
  --write           write the figures into docs/benchmarks.md (otherwise only print them)
  --data-dir DIR    keep the database in DIR and reuse it when it already holds --lots lots
                    (10,000,000 lots take minutes to load: load once, measure several times)
  --lean            also measure the leanest server of the same contract (bench/lean-search-server.ts)
                    on the same database in the same run: the premise check of the 0.3 target;
                    and the same server writing nothing, for what the commit costs
  --lean-steps      with --lean: also the lean server stopping its commit after each step
                    (the principal re-check, the counter, the report), one closed run each
  --lean-processes N  with --lean: also the lean server as N processes on one port (Node's
                    cluster; its rate per second is counted in each process, not the contract)
  --profile         profile the real server's CPU (node --cpu-prof) and print where it goes;
                    slows the server, so it cannot be combined with --write
  --sustained N     N more closed-load runs of the server right before its fixed-rate run, so that
                    the fixed rate meets a database that has just taken that many reports (the
                    tail after sustained load, issue 29 item 7); prints the p99 after them
  --scale-out       the same searches on PostgreSQL + Redis, with the Redis rate limiter and
                    the in-process one in the same run (see bench/search-scale-out.ts); with it:
    --schema NAME   load the lots into this PostgreSQL schema and keep it (reused by the
                    next run when it holds --lots lots)
    --limiter L     redis, in-process or both (default both)
    --profile       profile the server's CPU, one profile per limiter
`;

interface Settings extends LoadSettings {
  write: boolean;
  lean: boolean;
  leanSteps: boolean;
  leanProcesses: number;
  dataDir: string | null;
  profile: boolean;
  sustained: number;
}

function parseSettings(argv: string[]): Settings {
  const { values } = parseArgs({
    args: argv,
    options: {
      ...LOAD_OPTIONS,
      write: { type: 'boolean', default: false },
      lean: { type: 'boolean', default: false },
      'lean-steps': { type: 'boolean', default: false },
      'lean-processes': { type: 'string', default: '0' },
      'data-dir': { type: 'string' },
      profile: { type: 'boolean', default: false },
      sustained: { type: 'string', default: '0' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(USAGE);
    process.exit(0);
  }
  const settings: Settings = {
    ...loadSettings(values),
    write: values.write,
    lean: values.lean,
    leanSteps: values['lean-steps'],
    leanProcesses: Number(values['lean-processes']),
    dataDir: values['data-dir'] === undefined ? null : path.resolve(values['data-dir']),
    profile: values.profile,
    sustained: Number(values.sustained),
  };
  if (!Number.isInteger(settings.sustained) || settings.sustained < 0) throw new UsageError('--sustained takes a whole number');
  if (settings.leanSteps && !settings.lean) throw new UsageError('--lean-steps goes with --lean');
  // One process is the lean server's own run already.
  if (!Number.isInteger(settings.leanProcesses) || settings.leanProcesses < 0 || settings.leanProcesses === 1) throw new UsageError('--lean-processes takes a whole number of 2 or more');
  if (settings.leanProcesses > 0 && !settings.lean) throw new UsageError('--lean-processes goes with --lean');
  if (settings.write && settings.profile) throw new UsageError('--profile slows the server down: its figures must not go into the docs (drop --write)');
  return settings;
}

const log = (message: string) => process.stderr.write(`${message}\n`);
const int = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
const ms = (value: number) => (Number.isFinite(value) ? value.toFixed(value < 10 ? 2 : 1) : 'n/a');

const children: Child[] = [];
let tempDir: string | null = null;

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv.includes('--scale-out')) {
    // PostgreSQL + Redis: a benchmark of its own (bench/search-scale-out.ts), same method.
    const { scaleOutMain } = await import('./search-scale-out.ts');
    await scaleOutMain(argv.filter((arg) => arg !== '--scale-out'), children);
    return;
  }
  const settings = parseSettings(argv);
  const command = `npm run bench:search${argv.length ? ` -- ${argv.join(' ')}` : ''}`;

  tempDir = await mkdtemp(path.join(os.tmpdir(), 'vinhistory-bench-search-'));
  const dataDir = settings.dataDir ?? path.join(tempDir, 'data');
  const profileDir = settings.profile ? await mkdtemp(path.join(os.tmpdir(), 'vinhistory-search-profile-')) : null;
  const serverPort = await freePort();
  const baseUrl = `http://${HOST}:${serverPort}`;
  const serverEnv: Record<string, string> = {
    NODE_ENV: 'production',
    DATA_DIR: dataDir,
    PORT: String(serverPort),
    HOST,
    PUBLIC_BASE_URL: baseUrl,
    LOG_LEVEL: 'warn',
  };

  const { vins, token, loadSeconds, databaseBytes } = await prepareSearchDatabase(settings, serverEnv, log);

  log(`starting the server on ${baseUrl}${settings.profile ? ' (CPU profile on)' : ''}`);
  const childEnv = { ...process.env, ...serverEnv };
  // One process on SQLite with the in-memory rate limiter, whatever the shell has set.
  delete childEnv.DATABASE_URL;
  delete childEnv.REDIS_URL;
  const server = Child.start(
    'the server',
    [...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []), 'bin/vinhistory.js', 'serve'],
    { cwd: REPO_ROOT, env: childEnv },
  );
  children.push(server);
  await waitUntilReady(server, `${baseUrl}/healthz`);

  const headers = { authorization: token };
  const randomPath = () => `/api/v1/search?vin=${vins[Math.floor(Math.random() * vins.length)]}`;

  const body = await medianReport(baseUrl, headers, randomPath);
  const bodyFile = path.join(tempDir, 'report.json');
  await writeFile(bodyFile, body);
  const ceilingPort = await freePort();
  const ceilingUrl = `http://${HOST}:${ceilingPort}`;
  log(`starting the ceiling on ${ceilingUrl} with a ${int.format(Buffer.byteLength(body))}-byte report`);
  const ceiling = Child.start(
    'the ceiling server',
    ['bin/run-ts.js', 'bench/ceiling-server.ts', '--port', String(ceilingPort), '--host', HOST, '--body-file', bodyFile],
    { cwd: REPO_ROOT, env: { ...process.env, NODE_ENV: 'production' } },
  );
  children.push(ceiling);
  await waitUntilReady(ceiling, `${ceilingUrl}/api/v1/search`);
  const ceilingBody = await (await fetch(`${ceilingUrl}/api/v1/search`)).text();
  if (ceilingBody !== body) throw new Error('the ceiling does not serve the report it was given');

  const loadOptions = { connections: settings.connections, durationSeconds: settings.duration, warmupSeconds: settings.warmup, path: randomPath, headers };
  log(`real server: ${settings.connections} connections, ${settings.warmup} s warm-up, ${settings.duration} s measured`);
  const real = await withCpu(server, (onMeasuredRunStart) => measureThroughput({ url: baseUrl, ...loadOptions, onMeasuredRunStart }));
  checked('the server', server, real.result);
  log(`ceiling: ${settings.connections} connections, ${settings.warmup} s warm-up, ${settings.duration} s measured`);
  const top = await withCpu(ceiling, (onMeasuredRunStart) => measureThroughput({ url: ceilingUrl, ...loadOptions, onMeasuredRunStart }));
  checked('the ceiling', ceiling, top.result);
  // The tail after sustained load: the fixed rate right after closed-load runs, nothing between.
  const sustained: number[] = [];
  for (let i = 0; i < settings.sustained; i++) {
    log(`real server, sustained run ${i + 1} of ${settings.sustained}`);
    const run = await measureThroughput({ url: baseUrl, ...loadOptions });
    checked('the server', server, run);
    sustained.push(run.requestsPerSecond * (settings.duration + settings.warmup));
  }
  log(`real server at a fixed ${int.format(settings.rate)} req/s for ${settings.duration} s`);
  const paced = await withCpu(server, async (startMeter) => {
    await startMeter();
    return pacedLoad({ host: HOST, port: serverPort, rate: settings.rate, durationSeconds: settings.duration, path: randomPath, headers });
  });
  checkedPaced('the server', server, paced.result);
  await server.stop();
  const lean = settings.lean ? await measureLean({ dataDir, loadOptions, rate: settings.rate, duration: settings.duration, headers, randomPath, real: body, steps: settings.leanSteps, processes: settings.leanProcesses }) : null;
  await ceiling.stop();

  const markdown = renderMarkdown({ settings, command, loadSeconds, databaseBytes, vinCount: vins.length, bodyBytes: Buffer.byteLength(body), real, top, paced, lean });
  process.stdout.write(`\n${markdown}\n`);
  if (settings.sustained > 0) {
    process.stdout.write(
      `\nAfter ${settings.sustained} sustained closed-load run(s) (about ${int.format(sustained.reduce((a, b) => a + b, 0))} searches, each a report), ` +
        `the fixed ${int.format(settings.rate)} req/s at once: p50 ${ms(paced.result.latency.p50)} ms, p99 ${ms(paced.result.latency.p99)} ms, max ${ms(paced.result.latency.max)} ms (target p99 under ${TARGET_P99_MS} ms).\n`,
    );
  }

  if (profileDir) {
    // CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile: thread 0 is the main thread; the others
    // are tsx's module-loader worker.
    const main = (await readdir(profileDir)).find((file) => /\.\d+\.0\.\d+\.cpuprofile$/.test(file));
    if (!main) throw new Error(`the server wrote no main-thread CPU profile into ${profileDir}`);
    const file = path.join(profileDir, main);
    process.stdout.write(`\nCPU profile of the server over its whole life (start-up, the runs, the pauses between them): ${file}\n\n`);
    process.stdout.write(`${formatProfileSummary(await summariseCpuProfile(file, REPO_ROOT))}\n`);
  }
  if (settings.write) {
    await replaceDocSection(DOC_FILE, 'search', '## Latest figures: search', markdown);
    log(`wrote the figures into ${path.relative(process.cwd(), DOC_FILE)}`);
  }
}

/**
 * The lean server of the same contract (bench/lean-search-server.ts) on the same database, after
 * the real server has stopped: its answer checked against the real one's for the same VIN, then
 * the same closed load and the same fixed rate.
 */
async function measureLean(options: {
  dataDir: string;
  loadOptions: Omit<Parameters<typeof measureThroughput>[0], 'url' | 'onMeasuredRunStart'>;
  rate: number;
  duration: number;
  headers: Record<string, string>;
  randomPath: () => string;
  real: string;
  steps: boolean;
  /** Also the lean server as this many processes on one port (0: not; never 1). */
  processes: number;
}): Promise<LeanFigures> {
  const runs: LeanRun[] = [await runLean(options, 'all', false), await runLean(options, 'all', true)];
  if (options.processes > 0) runs.push(await runLean(options, 'all', false, options.processes));
  for (const commit of options.steps ? LEAN_STEPS.slice(1) : (['none'] as const)) runs.push(await runLean(options, commit, false));
  return { runs };
}

/** The lean server's commit levels, from the whole contract down to no transaction at all. */
const LEAN_STEPS = ['all', 'report', 'counter', 'recheck', 'none'] as const;
type LeanCommit = (typeof LEAN_STEPS)[number];
const LEAN_LABELS: Record<LeanCommit, string> = {
  all: 'lean server of the same contract',
  report: 'lean, commit up to the report (not the contract)',
  counter: 'lean, commit up to the counter (not the contract)',
  recheck: 'lean, commit of the re-check only (not the contract)',
  none: 'lean server writing nothing (not the contract)',
};

/** The label of a lean run in the table. */
const leanLabel = (run: Pick<LeanRun, 'commit' | 'thread' | 'processes'>) =>
  run.thread
    ? 'lean, lots read and commit on a second thread'
    : run.processes > 1
      ? `lean, ${run.processes} processes on one port (rate per process: not the contract)`
      : LEAN_LABELS[run.commit];

async function runLean(options: Parameters<typeof measureLean>[0], commit: LeanCommit, thread: boolean, processes = 1): Promise<LeanRun> {
  const port = await freePort();
  const url = `http://${HOST}:${port}`;
  const real = JSON.parse(options.real) as { vin: string; lots: unknown[]; report_url: string };
  log(`starting the lean server on ${url}, commit: ${commit}${thread ? ', on a thread' : ''}${processes > 1 ? `, ${processes} processes` : ''}`);
  const lean = Child.start(
    'the lean server',
    [
      'bin/run-ts.js',
      'bench/lean-search-server.ts',
      ...['--port', String(port), '--host', HOST, '--data-dir', options.dataDir, '--base-url', new URL(real.report_url).origin],
      ...['--commit', commit],
      ...(thread ? ['--thread'] : []),
      ...['--processes', String(processes)],
    ],
    { cwd: REPO_ROOT, env: { ...process.env, NODE_ENV: 'production' }, withDescendants: processes > 1 },
  );
  children.push(lean);
  try {
    await waitUntilReady(lean, `${url}/api/v1/search?vin=${real.vin}`, { headers: options.headers });
    // The same lots, the same size: a lean server that answered less would measure less.
    const response = await fetch(`${url}/api/v1/search?vin=${real.vin}`, { headers: options.headers });
    const text = await response.text();
    if (response.status !== 200) throw new Error(`the lean server answered ${response.status}: ${text.slice(0, 300)}`);
    const answer = JSON.parse(text) as typeof real;
    if (JSON.stringify(answer.lots) !== JSON.stringify(real.lots) || text.length !== options.real.length) {
      throw new Error(`the lean server's answer differs from the real one's for ${real.vin}:\n${text.slice(0, 300)}\n${options.real.slice(0, 300)}`);
    }
    log(`${leanLabel({ commit, thread, processes })}: the same closed load`);
    const before = await leanStats(url);
    const top = await withCpu(lean, (onMeasuredRunStart) => measureThroughput({ url, ...options.loadOptions, onMeasuredRunStart }));
    checked('the lean server', lean, top.result);
    const after = await leanStats(url);
    // Each process counts its own: with several, the two answers may come from different ones.
    const groupCommit = processes > 1 ? null : (after.searches - before.searches) / Math.max(1, after.transactions - before.transactions);
    if (commit !== 'all') return { commit, thread, processes, top, paced: null, groupCommit };
    log(`lean server at a fixed ${int.format(options.rate)} req/s for ${options.duration} s`);
    const paced = await withCpu(lean, async (startMeter) => {
      await startMeter();
      return pacedLoad({ host: HOST, port, rate: options.rate, durationSeconds: options.duration, path: options.randomPath, headers: options.headers });
    });
    checkedPaced('the lean server', lean, paced.result);
    return { commit, thread, processes, top, paced, groupCommit };
  } finally {
    await lean.stop();
  }
}

/** Fetches real reports of random VINs and returns the one of median size. */
async function medianReport(baseUrl: string, headers: Record<string, string>, randomPath: () => string): Promise<string> {
  const bodies: string[] = [];
  for (let i = 0; i < BODY_SAMPLES; i++) {
    const response = await fetch(`${baseUrl}${randomPath()}`, { headers });
    const text = await response.text();
    if (response.status !== 200) throw new Error(`a search answered ${response.status}, not 200: ${text.slice(0, 500)}`);
    bodies.push(text);
  }
  bodies.sort((a, b) => Buffer.byteLength(a) - Buffer.byteLength(b));
  return bodies[Math.floor(bodies.length / 2)]!;
}

/** Figures taken while requests fail measure the failure, not the service: stop instead. */
function checked(name: string, child: Child, result: ThroughputResult): ThroughputResult {
  if (result.non2xx > 0 || result.errors > 0 || result.total === 0) {
    throw new Error(
      `${name} gave ${result.non2xx} non-2xx answers ${JSON.stringify(result.statusCodes)}, ${result.errors} errors ` +
        `(${result.timeouts} timeouts) in ${result.total} requests. Its output:\n${child.recentOutput || '(nothing)'}`,
    );
  }
  return result;
}

function checkedPaced(name: string, child: Child, result: PacedLoadResult): void {
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(
      `the fixed-rate run of ${name} got ${result.non2xx} non-2xx answers ${JSON.stringify(result.statusCodes)} and ${result.errors} errors ` +
        `(${result.errorMessages.join('; ')}). It said:\n${child.recentOutput || '(nothing)'}`,
    );
  }
}

interface Figures {
  settings: Settings;
  command: string;
  /** Null when the lots were loaded by an earlier run (--data-dir). */
  loadSeconds: number | null;
  databaseBytes: number | null;
  vinCount: number;
  bodyBytes: number;
  real: Measured<ThroughputResult>;
  top: Measured<ThroughputResult>;
  paced: Measured<PacedLoadResult>;
  lean: LeanFigures | null;
}

/** The lean server: the whole contract (closed load and fixed rate), then its commit cut short (closed load). */
interface LeanFigures {
  runs: LeanRun[];
}

interface LeanRun {
  commit: LeanCommit;
  /** The lots read and the commit on a thread of their own (lean-search-server.ts --thread). */
  thread: boolean;
  /** Processes on one port (lean-search-server.ts --processes); 1 but for that run. */
  processes: number;
  top: Measured<ThroughputResult>;
  paced: Measured<PacedLoadResult> | null;
  /** Searches per transaction (the warm-up and the measured run); null where several processes commit. */
  groupCommit: number | null;
}

async function leanStats(url: string): Promise<{ transactions: number; searches: number }> {
  return (await (await fetch(`${url}/stats`)).json()) as { transactions: number; searches: number };
}

function renderMarkdown(figures: Figures): string {
  const { settings } = figures;
  const real = figures.real.result;
  const top = figures.top.result;
  const paced = figures.paced.result;
  const cpus = os.cpus();
  const machine = `${cpus[0]?.model.trim() ?? 'unknown CPU'}, ${cpus.length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB RAM, ${os.type()} ${os.release()}, Node.js ${process.version}`;
  const ratio = real.requestsPerSecond / top.requestsPerSecond;
  const sustained = paced.achievedRate >= settings.rate * 0.95;
  const latencyMet = sustained && paced.latency.p99 < TARGET_P99_MS;
  const cores = (value: number | null) => (value === null ? 'n/a' : value.toFixed(2));
  const row = (name: string, load: string, rps: number, latency: LatencySummary, bytes: number | null, cpu: number | null, non2xx: number) =>
    `| ${name} | ${load} | ${int.format(rps)} | ${ms(latency.p50)} | ${ms(latency.p99)} | ${ms(latency.max)} | ${bytes === null ? '' : int.format(bytes)} | ${cores(cpu)} | ${non2xx} |`;
  const closed = `${settings.connections} connections, ${settings.duration} s after ${settings.warmup} s warm-up`;
  return [
    `Taken ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC with \`${figures.command}\``,
    '',
    `- Machine: ${machine}; load generator and servers share it.`,
    `- Data: ${int.format(settings.lots)} synthetic lots (seed ${settings.seed}) on SQLite, ` +
      (figures.loadSeconds === null
        ? `loaded by an earlier run (--data-dir); searches draw from ${int.format(figures.vinCount)} of its VINs`
        : `${int.format(figures.vinCount)} VINs, loaded in ${figures.loadSeconds.toFixed(1)} s through \`upsertBatch\` (${int.format(settings.lots / figures.loadSeconds)} lots/s)`) +
      (figures.databaseBytes === null ? '.' : `; database ${(figures.databaseBytes / 2 ** 20).toFixed(0)} MiB (${int.format(figures.databaseBytes / settings.lots)} bytes per lot).`),
    `- Every request searches a random VIN of the set; the ceiling serves a real report of ${int.format(figures.bodyBytes)} bytes (the median of ${BODY_SAMPLES} real responses).`,
    '',
    '| run | load | req/s | p50 ms | p99 ms | max ms | bytes/response | server CPU (cores) | non-2xx |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|',
    row('server: `GET /api/v1/search`', closed, real.requestsPerSecond, real.latency, real.bytesPerResponse, figures.real.cores, real.non2xx),
    row('ceiling: bare Fastify, same body', closed, top.requestsPerSecond, top.latency, top.bytesPerResponse, figures.top.cores, top.non2xx),
    row('server at a fixed rate', `${int.format(settings.rate)} req/s evenly spaced, ${settings.duration} s`, paced.achievedRate, paced.latency, null, figures.paced.cores, paced.non2xx),
    ...(figures.lean?.runs ?? []).flatMap((run) => [
      row(leanLabel(run), closed, run.top.result.requestsPerSecond, run.top.result.latency, run.top.result.bytesPerResponse, run.top.cores, run.top.result.non2xx),
      ...(run.paced === null
        ? []
        : [row(`${leanLabel(run)}, at a fixed rate`, `${int.format(settings.rate)} req/s evenly spaced, ${settings.duration} s`, run.paced.result.achievedRate, run.paced.result.latency, null, run.paced.cores, run.paced.result.non2xx)]),
    ]),
    '',
    `- Server CPU per search: ${cpuPerRequest(figures.real.cores, real.requestsPerSecond)} under the closed load, ${cpuPerRequest(figures.paced.cores, paced.achievedRate)} at the fixed rate; the ceiling's per request: ${cpuPerRequest(figures.top.cores, top.requestsPerSecond)}.`,
    `- Throughput: the server does ${(ratio * 100).toFixed(0)}% of the ceiling (target at least ${TARGET_RATIO * 100}%): **${ratio >= TARGET_RATIO ? 'met' : 'missed'}**.`,
    ...(figures.lean === null ? [] : leanSummary(figures.lean, real.requestsPerSecond, top.requestsPerSecond)),
    `- Latency at ${int.format(settings.rate)} req/s: p99 ${ms(paced.latency.p99)} ms (target under ${TARGET_P99_MS} ms${settings.rate === 1000 ? '' : ' at 1,000 req/s'})` +
      `${sustained ? '' : `, and only ${int.format(paced.achievedRate)} req/s were answered`}: **${latencyMet ? 'met' : 'missed'}**.`,
  ].join('\n');
}

/** The lean runs against the ceiling and the server, and what each step of the commit costs it. */
function leanSummary(lean: LeanFigures, realPerSecond: number, ceilingPerSecond: number): string[] {
  const pct = (value: number) => `${(value * 100).toFixed(0)}%`;
  const lines = lean.runs.map(
    (run) =>
      `- ${leanLabel(run).replace(/^lean/, 'Lean')}: ${pct(run.top.result.requestsPerSecond / ceilingPerSecond)} of the ceiling, ` +
      `${cpuPerRequest(run.top.cores, run.top.result.requestsPerSecond)} of CPU per search` +
      (run.commit === 'none' || run.groupCommit === null ? '' : `, ${run.groupCommit.toFixed(1)} searches per transaction`) +
      (run.commit === 'all' ? `; the server does ${pct(realPerSecond / run.top.result.requestsPerSecond)} of it.` : '.'),
  );
  const steps = lean.runs.filter((run) => !run.thread && run.processes === 1);
  for (const [n, run] of steps.entries()) {
    const next = steps[n + 1];
    if (next !== undefined) lines.push(`- Commit step \`${run.commit}\` over \`${next.commit}\`: ${cpuDifference(run.top, next.top)} a search.`);
  }
  return lines;
}

/** The difference in CPU per request between two closed-load runs, in µs. */
function cpuDifference(a: Measured<ThroughputResult>, b: Measured<ThroughputResult>): string {
  if (a.cores === null || b.cores === null) return 'n/a';
  return `${int.format((a.cores / a.result.requestsPerSecond - b.cores / b.result.requestsPerSecond) * 1e6)} µs`;
}

/** CPU time per request in µs, from the cores used and the requests answered per second. */
function cpuPerRequest(cores: number | null, perSecond: number): string {
  return cores === null || perSecond <= 0 ? 'n/a' : `${int.format((cores / perSecond) * 1e6)} µs`;
}

async function cleanUp(): Promise<void> {
  await Promise.all(children.map((child) => child.stop().catch(() => child.killNow())));
  if (tempDir) await rm(tempDir, { recursive: true, force: true });
}

// Ctrl-C must not leave servers listening or a database in /tmp behind.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    log(`\n${signal}: stopping`);
    stopThroughputRun();
    for (const child of children) child.killNow();
    if (tempDir) rmSync(tempDir, { recursive: true, force: true });
    process.exit(130);
  });
}

try {
  await main();
} catch (error) {
  if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
    log(`${(error as Error).message}\n\n${USAGE}`);
    process.exitCode = 2;
  } else {
    log(`bench:search failed: ${(error as Error).stack ?? error}`);
    process.exitCode = 1;
  }
} finally {
  await cleanUp();
}
