/**
 * The market benchmark (`npm run bench:market -- [options]`): catalogue queries (filtered, masked
 * VIN, deep pages) and market values of the real server on SQLite (or PostgreSQL with
 * `--postgres URL`) with 1,000,000 synthetic lots, beside GET /api/v1/search on the same server in
 * the same run: closed loads (autocannon) for throughput, and a fixed rate (200 requests/s by
 * default, evenly spaced) for latency. Before each mix the server must answer a probe promptly
 * (an overloaded mix leaves a queue the next one would otherwise be measured behind), else it is
 * restarted. docs/benchmarks.md has the method and the figures.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { VEHICLE_MODELS } from '../src/dev/seed/synthetic-catalogue.ts';
import { migrateToLatest, openDatabase } from '../src/storage/database.ts';
import { createRepositories } from '../src/storage/repositories/index.ts';
import { createUnboundedCustomer, loadSyntheticLots, withIndexesBuiltAfter } from './support/bench-data.ts';
import { replaceDocSection } from './support/benchmarks-doc.ts';
import { Child, freePort, processCpuSeconds, waitUntilReady } from './support/children.ts';
import { pacedLoad } from './support/paced-load.ts';
import { prepareSearchDatabase } from './support/search-data.ts';
import { measureThroughput } from './support/throughput.ts';
import type { LatencySummary } from './support/latencies.ts';

const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));
const DOC_FILE = path.join(REPO_ROOT, 'docs', 'benchmarks.md');
const HOST = '127.0.0.1';
// Printed with the figures instead of a verdict on the machine: the reader judges whether it was quiet.
const loadAtStart = os.loadavg().map((load) => load.toFixed(2)).join(', ');
const log = (message: string) => process.stderr.write(`${message}\n`);
const int = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
const ms = (value: number) => (Number.isFinite(value) ? value.toFixed(value < 10 ? 2 : 1) : 'n/a');

const { values } = parseArgs({
  options: {
    lots: { type: 'string', default: '1000000' },
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '2' },
    connections: { type: 'string', default: '10' },
    rate: { type: 'string', default: '200' },
    seed: { type: 'string', default: '1' },
    'data-dir': { type: 'string' },
    postgres: { type: 'string' },
    schema: { type: 'string' },
    'drain-seconds': { type: 'string', default: '60' },
    // The server under `node --cpu-prof`, its profile written into this directory when it stops.
    'cpu-prof': { type: 'string' },
    write: { type: 'boolean', default: false },
    // Only the mixes whose names hold one of these words (comma-separated); the search, the reference, always runs.
    mixes: { type: 'string' },
    'closed-only': { type: 'boolean', default: false },
    'ready-seconds': { type: 'string', default: '60' },
    'load-only': { type: 'boolean', default: false },
  },
});
if (values.schema !== undefined && !/^[a-z_][a-z0-9_]{0,62}$/.test(values.schema)) throw new Error('--schema must be a lower-case SQL identifier');
if (values.schema !== undefined && values.postgres === undefined) throw new Error('--schema needs --postgres');
if (values['load-only'] && values['data-dir'] === undefined && values.schema === undefined) throw new Error('--load-only needs --data-dir or --schema: the lots would be thrown away');
const settings = {
  lots: Number(values.lots),
  duration: Number(values.duration),
  warmup: Number(values.warmup),
  connections: Number(values.connections),
  rate: Number(values.rate),
  seed: Number(values.seed),
  dataDir: values['data-dir'] ?? null,
  drainSeconds: Number(values['drain-seconds']),
  readySeconds: Number(values['ready-seconds']),
};
for (const [name, value] of Object.entries(settings)) if (typeof value === 'number' && !(Number.isInteger(value) && value > 0)) throw new Error(`--${name} must be a positive whole number`);

const pick = <T>(list: readonly T[]): T => list[Math.floor(Math.random() * list.length)]!;
const DAMAGES = ['FRONT END', 'REAR END', 'SIDE', 'ALL OVER', 'HAIL'];

/**
 * The lots on PostgreSQL, in a schema of their own: a named one (--schema) is kept and reused when
 * it holds --lots lots, an unnamed one is dropped at the end. Vacuumed and analysed before the
 * runs, as a fresh table has no statistics and no all-visible pages until autovacuum gets to it,
 * maybe mid-run.
 */
async function preparePostgres(url: string, log: (message: string) => void) {
  const schema = values.schema ?? `bench_market_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  const db = await openDatabase({ kind: 'postgres', url }, { schema });
  try {
    await migrateToLatest(db);
    const repos = createRepositories(db);
    const stored = await repos.lots.count();
    let vins: string[];
    let loadSeconds: number | null = null;
    if (values.schema !== undefined && stored === settings.lots) {
      log(`reusing the ${int.format(stored)} lots of PostgreSQL schema ${schema}`);
      vins = (await db.kysely.selectFrom('lots').select('vin').distinct().execute()).map((row) => row.vin);
      await admin.query(`truncate "${schema}".searches, "${schema}".reports, "${schema}".idempotency_keys, "${schema}".usage_counters cascade`);
    } else {
      if (stored !== 0) throw new Error(`schema ${schema} holds ${int.format(stored)} lots, not ${int.format(settings.lots)}: drop it or name another`);
      log(`loading ${int.format(settings.lots)} synthetic lots (seed ${settings.seed}) into PostgreSQL schema ${schema}`);
      const started = performance.now();
      ({ vins } = await withIndexesBuiltAfter(db, () => loadSyntheticLots(repos, { count: settings.lots, seed: settings.seed, progress: log }), log));
      loadSeconds = (performance.now() - started) / 1000;
      log(`loaded in ${loadSeconds.toFixed(1)} s, index builds included`);
    }
    // VACUUM as well: a loaded table's pages are not marked all-visible until a vacuum does it (and
    // autovacuum may be off, or lag by a fifth of the table), and without that PostgreSQL reads the
    // comparables through a bitmap heap scan, fetching every row, instead of from the covering index.
    await admin.query(`vacuum (analyze) "${schema}".lots`);
    const { token } = await createUnboundedCustomer(repos, `-${randomBytes(4).toString('hex')}`);
    const serverUrl = new URL(url);
    serverUrl.searchParams.set('options', `-c search_path=${schema}`);
    // Names the server's connections, so that their backends' CPU can be told from every other session's (backendCpu).
    const applicationName = `bench_market_${randomBytes(4).toString('hex')}`;
    serverUrl.searchParams.set('application_name', applicationName);
    const dropSchema = async () => {
      if (values.schema !== undefined) return;
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      await client.query(`drop schema "${schema}" cascade`).finally(() => client.end());
    };
    return { vins, token, loadSeconds, databaseUrl: serverUrl.toString(), schema, dropSchema, applicationName };
  } finally {
    await db.close();
    await admin.end();
  }
}

/**
 * CPU seconds used so far by each PostgreSQL backend of the server's connections (by pid), read from
 * /proc: the database's share of a request, which the server's own CPU leaves out. Null when the
 * database server is not on this machine (or /proc cannot tell).
 */
async function backendCpu(url: string, applicationName: string): Promise<Map<number, number> | null> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ pid: number }>('select pid from pg_stat_activity where application_name = $1', [applicationName]);
    const seconds = new Map<number, number>();
    for (const { pid } of rows) seconds.set(pid, await processCpuSeconds(`/proc/${pid}/stat`));
    return seconds;
  } catch {
    return null;
  } finally {
    await client.end();
  }
}

/** What the backends used between two readings; a backend that started between them counts from zero. */
function backendCpuBetween(before: Map<number, number> | null, after: Map<number, number> | null): number | null {
  if (before === null || after === null) return null;
  let total = 0;
  for (const [pid, seconds] of after) total += seconds - (before.get(pid) ?? 0);
  return total;
}

async function main(): Promise<void> {
  const tempDir = await mkdtemp(path.join(os.tmpdir(), 'vinhistory-bench-market-'));
  const dataDir = settings.dataDir ?? path.join(tempDir, 'data');
  const port = await freePort();
  const baseUrl = `http://${HOST}:${port}`;
  const serverEnv: Record<string, string> = { NODE_ENV: 'production', DATA_DIR: dataDir, PORT: String(port), HOST, PUBLIC_BASE_URL: baseUrl, LOG_LEVEL: 'warn' };
  const postgres = values.postgres === undefined ? null : await preparePostgres(values.postgres, log);
  const { vins, token, loadSeconds } = postgres ?? (await prepareSearchDatabase({ lots: settings.lots, seed: settings.seed, dataDir: settings.dataDir }, serverEnv, log));
  // Loading a large dataset once, on a busy machine, for runs on a quiet one later.
  if (values['load-only']) {
    log('--load-only: the lots are kept; no server, no runs');
    return;
  }
  const env = { ...process.env, ...serverEnv };
  delete env.DATABASE_URL;
  delete env.REDIS_URL;
  if (postgres !== null) env.DATABASE_URL = postgres.databaseUrl;
  const startServer = async () => {
    const profile = values['cpu-prof'] === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', path.resolve(values['cpu-prof'])];
    const child = Child.start('the server', [...profile, 'bin/vinhistory.js', 'serve'], { cwd: REPO_ROOT, env });
    // On a machine shared by many, the server's start alone took over three minutes.
    try {
      await waitUntilReady(child, `${baseUrl}/healthz`, {}, settings.readySeconds * 1000);
    } catch (error) {
      // A server that starts after the deadline would keep this process alive: it ran on, idle, for 20 minutes.
      await child.stop(2_000);
      throw error;
    }
    return child;
  };
  let server = await startServer();
  /**
   * Waits until the server answers three probes in a row within 20 ms each: an overloaded mix
   * leaves requests queued (the load's connections are gone, the server still answers them), and
   * the next mix would be measured behind that queue. Past --drain-seconds the server is restarted.
   */
  const drain = async (): Promise<string> => {
    const started = performance.now();
    let prompt = 0;
    while (prompt < 3) {
      if (performance.now() - started > settings.drainSeconds * 1000) {
        await server.stop(2_000);
        server = await startServer();
        return `restarted after ${settings.drainSeconds} s`;
      }
      const sent = performance.now();
      const ok = await fetch(`${baseUrl}/healthz`, { signal: AbortSignal.timeout(5_000) }).then((res) => res.ok, () => false);
      prompt = ok && performance.now() - sent < 20 ? prompt + 1 : 0;
      if (prompt < 3) await sleep(ok ? 50 : 250);
    }
    return `${((performance.now() - started) / 1000).toFixed(1)} s`;
  };
  try {
    const headers = { authorization: token };
    const vehicle = () => pick(VEHICLE_MODELS);
    const yearOf = (model: (typeof VEHICLE_MODELS)[number]) => model.years[0] + Math.floor(Math.random() * (model.years[1] - model.years[0] + 1));
    // Deep pages: the cursor of page 20 of a popular make's catalogue, found before the runs.
    const deepCursors: string[] = [];
    for (const make of ['FORD', 'HONDA', 'TOYOTA', 'CHEVROLET', 'NISSAN']) {
      let cursor: string | null = null;
      for (let page = 0; page < 20; page++) {
        const res: Response = await fetch(`${baseUrl}/api/v1/lots?make=${make}&limit=25${cursor ? `&cursor=${cursor}` : ''}`, { headers });
        cursor = (await res.json() as { next_cursor: string | null }).next_cursor;
        if (cursor === null) break;
      }
      if (cursor !== null) deepCursors.push(`make=${make}&limit=25&cursor=${cursor}`);
    }
    const mixes: Record<string, () => string> = {
      'GET /api/v1/search (by VIN)': () => `/api/v1/search?vin=${pick(vins)}`,
      'catalogue, filtered (make, model, years, sort by date)': () => {
        const model = vehicle();
        const year = yearOf(model);
        return `/api/v1/lots?make=${encodeURIComponent(model.brand)}&model=${encodeURIComponent(model.model)}&year_min=${year - 1}&year_max=${year + 1}&status=sold`;
      },
      'catalogue, upcoming by make, what sells next': () => `/api/v1/lots?make=${encodeURIComponent(vehicle().brand)}&status=upcoming&sort=sale_date_asc`,
      'catalogue, masked VIN': () => `/api/v1/lots?vin=${pick(vins).slice(0, 11)}******`,
      'catalogue, page 21 by cursor': () => `/api/v1/lots?${pick(deepCursors)}`,
      'market by VIN': () => `/api/v1/market?vin=${pick(vins)}`,
      'market by make, model, year, damage': () => {
        const model = vehicle();
        return `/api/v1/market?make=${encodeURIComponent(model.brand)}&model=${encodeURIComponent(model.model)}&year=${yearOf(model)}&primary_damage=${encodeURIComponent(pick(DAMAGES))}`;
      },
    };
    const wanted = values.mixes?.split(',').map((word) => word.trim().toLowerCase()).filter((word) => word !== '') ?? null;
    const chosen = Object.entries(mixes).filter(([name], i) => i === 0 || wanted === null || wanted.some((word) => name.toLowerCase().includes(word)));
    const rows: string[] = [];
    const drains: string[] = [];
    const figures: Record<string, { closed: number; cpuMsPerRequest: number | null; p99: LatencySummary | null }> = {};
    const databaseCpu: string[] = [];
    for (const [name, path] of chosen) {
      const drained = await drain();
      drains.push(`${name}: ${drained}`);
      log(`${name}: the server answers promptly (${drained}); closed load, ${settings.connections} connections, ${settings.duration} s`);
      // The server's CPU (every thread) per request of the measured run: what a mix costs whatever else the machine runs.
      let cpuBefore: number | null = null;
      let backendsBefore: Map<number, number> | null = null;
      const closed = await measureThroughput({
        url: baseUrl, connections: settings.connections, durationSeconds: settings.duration, warmupSeconds: settings.warmup, path, headers,
        onMeasuredRunStart: async () => {
          cpuBefore = await server.cpuSeconds();
          if (postgres !== null) backendsBefore = await backendCpu(values.postgres!, postgres.applicationName);
        },
      });
      const cpuAfter = await server.cpuSeconds();
      if (postgres !== null) {
        const seconds = backendCpuBetween(backendsBefore, await backendCpu(values.postgres!, postgres.applicationName));
        databaseCpu.push(`${name}: ${seconds === null || closed.total === 0 ? 'n/a' : ((seconds * 1000) / closed.total).toFixed(3)}`);
      }
      const cpuMsPerRequest = cpuBefore !== null && cpuAfter !== null && closed.total > 0 ? ((cpuAfter - cpuBefore) * 1000) / closed.total : null;
      let paced: Awaited<ReturnType<typeof pacedLoad>> | null = null;
      if (!values['closed-only']) {
        log(`${name}: ${settings.rate} requests/s, ${settings.duration} s`);
        // The closed load saturates the server by design: the fixed rate starts from an empty queue.
        const drainedAgain = await drain();
        if (drainedAgain.startsWith('restarted')) drains.push(`${name}, before its fixed rate: ${drainedAgain}`);
        paced = await pacedLoad({ host: HOST, port, rate: settings.rate, durationSeconds: settings.duration, path, headers });
      }
      const bad = closed.non2xx + closed.errors + (paced?.non2xx ?? 0) + (paced?.errors ?? 0);
      figures[name] = { closed: closed.requestsPerSecond, cpuMsPerRequest, p99: paced?.latency ?? null };
      rows.push(
        `| ${name} | ${int.format(closed.requestsPerSecond)} | ${ms(closed.latency.p50)} / ${ms(closed.latency.p99)} | ${cpuMsPerRequest === null ? 'n/a' : cpuMsPerRequest.toFixed(3)} | ${paced === null ? 'not run' : `${ms(paced.latency.p50)} / ${ms(paced.latency.p99)} / ${ms(paced.latency.max)}`} | ${bad === 0 ? 'none' : `${bad} (${JSON.stringify({ ...closed.statusCodes, ...paced?.statusCodes })})`} |`,
      );
    }
    const search = figures['GET /api/v1/search (by VIN)']!;
    const catalogue = Object.entries(figures).filter(([name]) => name.startsWith('catalogue'));
    const ratios = catalogue.map(([name, figure]) => `${name}: ${(figure.closed / search.closed).toFixed(2)}`);
    // The target's ratio as the server's CPU per request sees it: what the throughputs would be on a machine the server had alone.
    const cpuRatios = catalogue.map(([name, figure]) =>
      `${name}: ${search.cpuMsPerRequest !== null && figure.cpuMsPerRequest !== null ? (search.cpuMsPerRequest / figure.cpuMsPerRequest).toFixed(2) : 'n/a'}`);
    const markdown = [
      `Command: \`npm run bench:market -- ${process.argv.slice(2).join(' ')}\`; ${int.format(settings.lots)} synthetic lots (seed ${settings.seed}) of ${int.format(vins.length)} VINs on ${postgres === null ? 'SQLite' : 'PostgreSQL'}${loadSeconds === null ? '' : `, loaded in ${loadSeconds.toFixed(0)} s`}; ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'CPU'}, Node ${process.version}; load average ${loadAtStart} at the start, ${os.loadavg().map((load) => load.toFixed(2)).join(', ')} at the end (the benchmark's own server and load generator take about 2).`,
      '',
      `| query | closed load, req/s (${settings.connections} connections) | closed p50 / p99 ms | server CPU ms per request (closed) | at ${settings.rate} req/s: p50 / p99 / max ms | errors |`,
      '|---|---|---|---|---|---|',
      ...rows,
      '',
      `Catalogue throughput against the search's in the same run: ${ratios.join('; ')}.`,
      '',
      `The same ratio from the server's CPU per request (search's / catalogue's): ${cpuRatios.join('; ')}.`,
      '',
      ...(postgres === null ? [] : [`PostgreSQL's CPU per request (closed), the server's connections' backends, ms: ${databaseCpu.join('; ')}.`, '']),
      `Waited before each mix until the server answered three probes within 20 ms: ${drains.join('; ')}.`,
    ].join('\n');
    process.stdout.write(`\n${markdown}\n`);
    if (values.write) await replaceDocSection(DOC_FILE, 'market', '## Latest figures: market', markdown);
  } finally {
    await server.stop();
    await postgres?.dropSchema();
    if (settings.dataDir === null) await rm(tempDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exitCode = 1;
});
