/**
 * Where the CPU of one search goes, summed (`npm run bench:search-breakdown -- [options]`).
 *
 * Runs the real server as bench:search does (`serve`, NODE_ENV=production, SQLite, the build) under
 * `node --cpu-prof`, loads it with autocannon at a fixed number of connections, and attributes
 * every CPU sample of the measured seconds to one step of a search (bench/support/cpu-steps.ts:
 * the deepest frame on the sample's stack that a step names decides). The steps' times add up to
 * the profile's busy time; divided by the searches answered they give the microseconds of each
 * step in one search, summing to the whole. The server's CPU per search from /proc is printed
 * beside it: the sampling profiler itself costs some of it, so the profiled figures are a little
 * above bench:search's unprofiled ones.
 *
 * For the time of each SQL statement in isolation, see bench/search-statements.ts.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { attributeCpuProfile, type StepRule } from './support/cpu-steps.ts';
import { Child, freePort, waitUntilReady } from './support/children.ts';
import { withCpu } from './support/cpu-meter.ts';
import { prepareSearchDatabase } from './support/search-data.ts';
import { measureThroughput } from './support/throughput.ts';
import { pacedLoad } from './support/paced-load.ts';

const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));
const HOST = '127.0.0.1';
/** The thread in which V8's sampling profiler processes its events: the measurement's cost. */
const PROFILER_THREAD = 'v8:ProfEvntProc';

const USAGE = `usage: npm run bench:search-breakdown -- [options]

  --lots N          synthetic lots to load (default 100000)
  --seed N          seed of the synthetic lots (default 1)
  --data-dir DIR    keep the database in DIR and reuse it (as bench:search's --data-dir)
  --connections N   autocannon connections (default 10)
  --warmup S        seconds of warm-up, not counted (default 2)
  --duration S      seconds measured (default 8)
  --top N           functions named per step (default 4)
  --rate N          instead of the closed loop, N searches a second evenly spaced (the fixed-rate
                    run of bench:search), where searches seldom share a commit
`;

/**
 * The steps of a search, each by the code that does it. Order does not matter: the deepest
 * matching frame of a sample wins, so a statement run by the commit is the commit's and the
 * socket write under the route's reply is HTTP's.
 */
const STEPS: readonly StepRule[] = [
  { step: 'HTTP: socket, parser, router, reply', file: '/fastify/' },
  { step: 'HTTP: socket, parser, router, reply', file: '/find-my-way/' },
  { step: 'HTTP: socket, parser, router, reply', file: 'node:_http' },
  { step: 'HTTP: socket, parser, router, reply', file: 'node:net' },
  { step: 'HTTP: socket, parser, router, reply', file: 'node:internal/stream_base_commons' },
  { step: 'request validation (schema)', file: '/ajv/' },
  { step: 'request validation (schema)', file: '/fast-uri/' },
  { step: 'authentication (cached principal)', file: 'http/plugins/authentication' },
  { step: 'authentication (cached principal)', file: 'accounts/principal-cache' },
  { step: 'authentication (cached principal)', file: 'accounts/api-token' },
  { step: 'VIN check', file: 'domain/vin' },
  { step: 'rate limit', file: 'limits/rate/' },
  { step: 'lots read', file: 'repositories/lots-repository' },
  { step: 'lots read', file: 'storage/lot-rows' },
  { step: 'lots read', file: 'storage/dialects/sqlite/index' },
  { step: 'commit: re-check, count, report, record, COMMIT', file: 'storage/search-commit' },
  { step: 'commit: re-check, count, report, record, COMMIT', file: 'storage/dialects/sqlite/search-commit' },
  { step: 'commit: re-check, count, report, record, COMMIT', file: 'storage/principal-recheck' },
  { step: 'commit: re-check, count, report, record, COMMIT', file: 'storage/ledger-statements' },
  { step: 'search service (order of checks)', file: 'search/search-service' },
  { step: 'search service (order of checks)', file: 'limits/billing-period' },
  { step: 'route and answer', file: 'http/api/v1/search' },
  { step: 'limit headers', file: 'limits/limit-headers' },
  { step: 'serialisation (JSON)', file: '/fast-json-stringify/' },
  { step: 'metrics', file: '/prom-client/' },
  { step: 'metrics', file: 'http/plugins/metrics' },
  { step: 'logging', file: '/pino' },
  { step: 'logging', file: '/@pinojs/' },
  { step: 'logging', file: 'observability/logger' },
  { step: 'page and error hooks', file: 'http/plugins/helmet' },
  { step: 'page and error hooks', file: 'http/plugins/error-handler' },
  { step: 'ids', file: 'domain/ids' },
];

const log = (message: string) => process.stderr.write(`${message}\n`);

function settingsOf(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    options: {
      lots: { type: 'string', default: '100000' },
      seed: { type: 'string', default: '1' },
      'data-dir': { type: 'string' },
      connections: { type: 'string', default: '10' },
      warmup: { type: 'string', default: '2' },
      duration: { type: 'string', default: '8' },
      rate: { type: 'string' },
      top: { type: 'string', default: '4' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(USAGE);
    process.exit(0);
  }
  const positive = (name: string, value: string, min: number) => {
    const n = Number(value);
    if (!Number.isSafeInteger(n) || n < min) throw new Error(`--${name} must be an integer of at least ${min}\n\n${USAGE}`);
    return n;
  };
  return {
    lots: positive('lots', values.lots, 1),
    seed: positive('seed', values.seed, 0),
    dataDir: values['data-dir'] === undefined ? null : path.resolve(values['data-dir']),
    connections: positive('connections', values.connections, 1),
    warmup: positive('warmup', values.warmup, 0),
    duration: positive('duration', values.duration, 1),
    rate: values.rate === undefined ? null : positive('rate', values.rate, 1),
    top: positive('top', values.top, 1),
  };
}

/** The monotonic clock V8's profiler stamps its samples with, in microseconds. */
const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);

async function main(): Promise<void> {
  const settings = settingsOf(process.argv.slice(2));
  const tempDir = await mkdtemp(path.join(os.tmpdir(), 'vinhistory-breakdown-'));
  const profileDir = path.join(tempDir, 'profile');
  let server: Child | null = null;
  try {
    const port = await freePort();
    const baseUrl = `http://${HOST}:${port}`;
    const env: Record<string, string> = { NODE_ENV: 'production', DATA_DIR: settings.dataDir ?? path.join(tempDir, 'data'), PORT: String(port), HOST, PUBLIC_BASE_URL: baseUrl, LOG_LEVEL: 'warn' };
    const { vins, token } = await prepareSearchDatabase(settings, env, log);
    const childEnv = { ...process.env, ...env };
    delete childEnv.DATABASE_URL;
    delete childEnv.REDIS_URL;
    server = Child.start('the server', ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, 'bin/vinhistory.js', 'serve'], { cwd: REPO_ROOT, env: childEnv });
    await waitUntilReady(server, `${baseUrl}/healthz`);

    const randomPath = () => `/api/v1/search?vin=${vins[Math.floor(Math.random() * vins.length)]}`;
    const headers = { authorization: token };
    let window = { fromUs: 0, toUs: 0 };
    let mainCpuAtStart: number | null = null;
    let threadsAtStart = new Map<string, number>();
    const startMeasuring = async (startMeter: () => Promise<void>) => {
      await startMeter();
      mainCpuAtStart = await server!.cpuSeconds(true);
      threadsAtStart = await server!.threadCpuSeconds();
      window.fromUs = monotonicUs();
    };
    let measured: { result: { total: number; non2xx: number; errors: number; latencyP99Ms?: number }; cores: number | null };
    if (settings.rate === null) {
      log(`profiling the server: ${settings.connections} connections, ${settings.warmup} s warm-up, ${settings.duration} s measured`);
      measured = await withCpu(server, (startMeter) =>
        measureThroughput({
          url: baseUrl,
          connections: settings.connections,
          durationSeconds: settings.duration,
          warmupSeconds: settings.warmup,
          path: randomPath,
          headers,
          onMeasuredRunStart: () => startMeasuring(startMeter),
        }),
      );
    } else {
      log(`profiling the server: ${settings.rate} searches a second evenly spaced, ${settings.warmup} s warm-up, ${settings.duration} s measured`);
      const rate = settings.rate;
      if (settings.warmup > 0) await pacedLoad({ host: HOST, port, rate, durationSeconds: settings.warmup, path: randomPath, headers });
      const paced = await withCpu(server, async (startMeter) => {
        await startMeasuring(startMeter);
        return pacedLoad({ host: HOST, port, rate, durationSeconds: settings.duration, path: randomPath, headers });
      });
      measured = { result: { total: paced.result.completed, non2xx: paced.result.non2xx, errors: paced.result.errors, latencyP99Ms: paced.result.latency.p99 }, cores: paced.cores };
    }
    window = { ...window, toUs: monotonicUs() };
    const mainCpuAtEnd = await server.cpuSeconds(true);
    const threadsAtEnd = await server.threadCpuSeconds();
    const { result, cores } = measured;
    if (result.non2xx > 0 || result.errors > 0) throw new Error(`the server answered ${result.non2xx} non-2xx and ${result.errors} errors: ${server.recentOutput}`);
    await server.stop();
    server = null;

    const files = await readdir(profileDir);
    const mainFile = files.find((file) => /\.\d+\.0\.\d+\.cpuprofile$/.test(file));
    if (!mainFile) throw new Error(`the server wrote no main-thread CPU profile into ${profileDir}`);
    const main = await attributeCpuProfile(path.join(profileDir, mainFile), STEPS, window, settings.top);

    // The profiler samples the main thread by the clock: a sample taken while the thread waited
    // for the CPU counts as busy. So the samples give each step's share, and /proc gives the CPU
    // those shares divide: the main thread's, and the other threads' (the SQLite checkpointer's,
    // V8's garbage-collection helpers, libuv's pool) as one line.
    const searches = result.total;
    const seconds = (window.toUs - window.fromUs) / 1e6;
    if (cores === null || mainCpuAtStart === null || mainCpuAtEnd === null) throw new Error('could not read the server\'s CPU time from /proc');
    const mainUs = ((mainCpuAtEnd - mainCpuAtStart) * 1e6) / searches;
    // The profiler's own thread is the measurement's cost, not the server's.
    const profilerUs = (((threadsAtEnd.get(PROFILER_THREAD) ?? 0) - (threadsAtStart.get(PROFILER_THREAD) ?? 0)) * 1e6) / searches;
    const totalUs = (cores * seconds * 1e6) / searches - profilerUs;
    const perSampledMs = mainUs / main.busyMs;
    const us = (value: number) => value.toFixed(1);
    const lines = [
      `${searches.toLocaleString('en-US')} searches in ${seconds.toFixed(1)} s (${Math.round(searches / seconds).toLocaleString('en-US')}/s, profiled), ${settings.rate === null ? `${settings.connections} connections` : `${settings.rate}/s evenly spaced, p99 ${result.latencyP99Ms?.toFixed(1)} ms`}, ${settings.lots.toLocaleString('en-US')} lots; load average ${os.loadavg().map((load) => load.toFixed(1)).join(', ')}.`,
      '',
      '| step | µs per search | share | mostly in (own time, µs per search) |',
      '|---|---:|---:|---|',
    ];
    const mostly = (top: { name: string; ms: number }[]) => top.map((entry) => `${entry.name.replace(/\|/g, '\\|')} ${us(entry.ms * perSampledMs)}`).join('; ');
    for (const line of main.steps) lines.push(`| ${line.step} | ${us(line.ms * perSampledMs)} | ${((line.ms * perSampledMs * 100) / totalUs).toFixed(1)}% | ${mostly(line.top)} |`);
    const others = [...threadsAtEnd]
      .filter(([name]) => name !== 'main thread' && name !== PROFILER_THREAD)
      .map(([name, end]) => ({ name, us: ((end - (threadsAtStart.get(name) ?? 0)) * 1e6) / searches }))
      .filter((thread) => thread.us >= 0.05)
      .sort((a, b) => b.us - a.us);
    const othersUs = others.reduce((sum, thread) => sum + thread.us, 0);
    lines.push(`| other threads (by name; "node" are the checkpointer's and V8's workers) | ${us(othersUs)} | ${((othersUs * 100) / totalUs).toFixed(1)}% | ${others.map((thread) => `${thread.name} ${us(thread.us)}`).join('; ')} |`);
    lines.push(`| **sum: the server's CPU per search (/proc, less the profiler's thread)** | **${us(totalUs)}** | 100% | |`);
    lines.push(
      '',
      `The profiler's own thread (${PROFILER_THREAD}) used ${us(profilerUs)} µs per search more, left out. Main thread ${us(mainUs)} µs per search; the profile saw it busy ${((main.busyMs / 1000 / seconds) * 100).toFixed(0)}% of the time (samples are by the clock: under load they include waiting for the CPU), and used ${(cores).toFixed(2)} cores in all.`,
    );
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    if (server) await server.stop().catch(() => server?.killNow());
    await rm(tempDir, { recursive: true, force: true });
  }
}

try {
  await main();
} catch (error) {
  log(`bench:search-breakdown failed: ${(error as Error).stack ?? error}`);
  process.exitCode = 1;
}
