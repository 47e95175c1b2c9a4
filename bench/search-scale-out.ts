/**
 * `npm run bench:search -- --scale-out`: the search benchmark on PostgreSQL + Redis. One server
 * process with the Redis rate limiter, then the same server with the in-process limiter, against
 * the same database and the same requests in the same run: the difference is what the shared
 * (Redis) limiter costs per request. Invoked by bench/search.ts; see docs/benchmarks.md.
 */
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { migrateToLatest, openDatabase } from '../src/storage/database.ts';
import { createRepositories } from '../src/storage/repositories/index.ts';
import { createUnboundedCustomer, loadSyntheticLots } from './support/bench-data.ts';
import { replaceDocSection } from './support/benchmarks-doc.ts';
import { Child, freePort, waitUntilReady } from './support/children.ts';
import { withCpu, type Measured } from './support/cpu-meter.ts';
import { formatProfileSummary, summariseCpuProfile } from './support/cpu-profile.ts';
import { LOAD_OPTIONS, loadSettings } from './support/load-settings.ts';
import { pacedLoad, type PacedLoadResult } from './support/paced-load.ts';
import { measureThroughput, type ThroughputResult } from './support/throughput.ts';

const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));
const DOC_FILE = path.join(REPO_ROOT, 'docs', 'benchmarks.md');
const HOST = '127.0.0.1';
const log = (message: string) => process.stderr.write(`${message}\n`);
const int = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
const ms = (value: number) => (Number.isFinite(value) ? value.toFixed(value < 10 ? 2 : 1) : 'n/a');

interface Run {
  limiter: 'redis' | 'in-process';
  throughput: Measured<ThroughputResult>;
  /** CPU of PostgreSQL's and Redis's processes during the throughput run, in cores. */
  services: ServiceCpu;
  paced: Measured<PacedLoadResult>;
}

type Limiter = Run['limiter'];

export async function scaleOutMain(argv: string[], children: Child[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      ...LOAD_OPTIONS,
      'database-url': { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/test' },
      'redis-url': { type: 'string', default: 'redis://127.0.0.1:6379' },
      write: { type: 'boolean', default: false },
      // The schema to load into and keep (reused when it already holds --lots lots): loading takes
      // longer than a run, and comparing two builds wants the same data.
      schema: { type: 'string' },
      limiter: { type: 'string', default: 'both' },
      profile: { type: 'boolean', default: false },
    },
    strict: true,
  });
  const settings = loadSettings(values);
  const limiters: Limiter[] = values.limiter === 'both' ? ['redis', 'in-process'] : values.limiter === 'redis' || values.limiter === 'in-process' ? [values.limiter] : [];
  if (limiters.length === 0) throw new Error(`--limiter must be redis, in-process or both; got ${values.limiter}`);
  if (values.write && (values.profile || limiters.length !== 2)) throw new Error('--write needs both limiters and no --profile');
  if (values.schema !== undefined && !/^[a-z_][a-z0-9_]{0,62}$/.test(values.schema)) throw new Error('--schema must be a lower-case SQL identifier');
  const command = `npm run bench:search -- --scale-out${argv.length ? ` ${argv.join(' ')}` : ''}`;

  // A schema of its own, dropped at the end: the benchmark never touches other data.
  const keep = values.schema !== undefined;
  const schema = values.schema ?? `bench_${randomBytes(4).toString('hex')}`;
  const databaseUrl = new URL(values['database-url']);
  databaseUrl.searchParams.set('options', `-c search_path=${schema}`);
  const admin = new pg.Client({ connectionString: values['database-url'] });
  await admin.connect();
  try {
    const db = await openDatabase({ kind: 'postgres', url: values['database-url'] }, { schema });
    let vins: string[];
    let token: string;
    let loadSeconds: number;
    try {
      await migrateToLatest(db);
      const repos = createRepositories(db);
      const stored = await repos.lots.count();
      if (keep && stored === settings.lots) {
        log(`reusing the ${int.format(stored)} lots of PostgreSQL schema ${schema}`);
        const rows = await db.kysely.selectFrom('lots').select('vin').distinct().execute();
        vins = rows.map((row) => row.vin);
        loadSeconds = 0;
        // What earlier runs wrote goes, so that every run starts from the same tables.
        await admin.query(`truncate "${schema}".searches, "${schema}".reports, "${schema}".idempotency_keys, "${schema}".usage_counters cascade`);
      } else {
        if (stored !== 0) throw new Error(`schema ${schema} holds ${stored} lots, not ${settings.lots}: drop it or name another`);
        log(`loading ${int.format(settings.lots)} synthetic lots into PostgreSQL schema ${schema}`);
        ({ vins, seconds: loadSeconds } = await loadSyntheticLots(repos, { count: settings.lots, seed: settings.seed }));
        log(`loaded in ${loadSeconds.toFixed(1)} s`);
        // Fresh tables have no statistics until autovacuum gets to them, which it may do mid-run.
        await admin.query(`analyze "${schema}".lots`);
      }
      // A kept schema already has the customers of earlier runs.
      ({ token } = await createUnboundedCustomer(repos, keep ? `-${randomBytes(4).toString('hex')}` : ''));
    } finally {
      await db.close();
    }

    const headers = { authorization: token };
    const randomPath = () => `/api/v1/search?vin=${vins[Math.floor(Math.random() * vins.length)]}`;
    const runs: Run[] = [];
    const profileDir = values.profile ? await mkdtemp(path.join(os.tmpdir(), 'vinhistory-scale-out-profile-')) : null;
    for (const limiter of limiters) {
      const port = await freePort();
      const env: Record<string, string> = {
        ...(process.env as Record<string, string>),
        NODE_ENV: 'production',
        DATA_DIR: path.join(os.tmpdir(), `vinhistory-bench-${schema}`),
        DATABASE_URL: databaseUrl.toString(),
        PORT: String(port),
        HOST,
        PUBLIC_BASE_URL: `http://${HOST}:${port}`,
        LOG_LEVEL: 'warn',
      };
      if (limiter === 'redis') env.REDIS_URL = values['redis-url'];
      else delete env.REDIS_URL;
      log(`server with the ${limiter} rate limiter on port ${port}`);
      const profileArgs = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${path.join(profileDir, limiter)}`] : [];
      const server = Child.start(`the server (${limiter})`, [...profileArgs, 'bin/vinhistory.js', 'serve'], { cwd: REPO_ROOT, env });
      children.push(server);
      await waitUntilReady(server, `http://${HOST}:${port}/healthz`);
      const url = `http://${HOST}:${port}`;
      let servicesAt: { cpu: Map<number, ServiceSample>; at: number } | null = null;
      const throughput = await withCpu(server, (onMeasuredRunStart) =>
        measureThroughput({
          url,
          connections: settings.connections,
          durationSeconds: settings.duration,
          warmupSeconds: settings.warmup,
          path: randomPath,
          headers,
          onMeasuredRunStart: async () => {
            servicesAt = { cpu: await serviceCpu(), at: performance.now() };
            await onMeasuredRunStart();
          },
        }),
      );
      const services = servicesUsed(servicesAt!, await serviceCpu(), performance.now());
      if (throughput.result.non2xx > 0 || throughput.result.errors > 0) {
        throw new Error(`the ${limiter} run got ${throughput.result.non2xx} non-2xx answers and ${throughput.result.errors} errors:\n${server.recentOutput}`);
      }
      const paced = await withCpu(server, async (startMeter) => {
        await startMeter();
        return pacedLoad({ host: HOST, port, rate: settings.rate, durationSeconds: settings.duration, path: randomPath, headers });
      });
      await server.stop();
      runs.push({ limiter, throughput, services, paced });
    }

    const markdown = render(settings, command, loadSeconds, vins.length, runs);
    process.stdout.write(`\n${markdown}\n`);
    for (const run of runs) {
      const rps = run.throughput.result.requestsPerSecond;
      process.stdout.write(
        `${run.limiter}: PostgreSQL ${run.services.postgres.toFixed(2)} cores (${int.format((run.services.postgres / rps) * 1e6)} µs per request), ` +
          `Redis ${run.services.redis.toFixed(2)} cores (${int.format((run.services.redis / rps) * 1e6)} µs per request)\n`,
      );
    }
    if (profileDir) {
      for (const limiter of limiters) {
        const dir = path.join(profileDir, limiter);
        // CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile: thread 0 is the main thread.
        const main = (await readdir(dir)).find((file) => /\.\d+\.0\.\d+\.cpuprofile$/.test(file));
        if (!main) throw new Error(`the server wrote no main-thread CPU profile into ${dir}`);
        process.stdout.write(`\nCPU profile of the server (${limiter}) over its whole life: ${path.join(dir, main)}\n\n`);
        process.stdout.write(`${formatProfileSummary(await summariseCpuProfile(path.join(dir, main), REPO_ROOT))}\n`);
      }
    }
    if (values.write) {
      await replaceDocSection(DOC_FILE, 'search-scale-out', '## Latest figures: search on PostgreSQL + Redis', markdown);
      log(`wrote the figures into ${path.relative(process.cwd(), DOC_FILE)}`);
    }
  } finally {
    if (!keep) await admin.query(`drop schema if exists "${schema}" cascade`);
    await admin.end();
  }
}

interface ServiceSample {
  name: 'postgres' | 'redis';
  seconds: number;
}

interface ServiceCpu {
  postgres: number;
  redis: number;
}

/**
 * CPU seconds of every PostgreSQL and Redis process on this machine, by pid (the benchmark's
 * database and Redis run here; their background processes count too: a COMMIT's WAL flush is
 * partly the WAL writer's).
 */
async function serviceCpu(): Promise<Map<number, ServiceSample>> {
  const samples = new Map<number, ServiceSample>();
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = await readFile(`/proc/${entry}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const name = comm.startsWith('postgres') ? 'postgres' : comm.startsWith('redis-server') ? 'redis' : null;
      if (name === null) continue;
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      samples.set(Number(entry), { name, seconds: (Number(fields[11]) + Number(fields[12])) / 100 });
    } catch {
      // The process ended meanwhile.
    }
  }
  return samples;
}

function servicesUsed(from: { cpu: Map<number, ServiceSample>; at: number }, to: Map<number, ServiceSample>, at: number): ServiceCpu {
  const used: ServiceCpu = { postgres: 0, redis: 0 };
  for (const [pid, sample] of to) used[sample.name] += sample.seconds - (from.cpu.get(pid)?.seconds ?? 0);
  const seconds = (at - from.at) / 1000;
  return { postgres: used.postgres / seconds, redis: used.redis / seconds };
}

function render(settings: { lots: number; duration: number; warmup: number; connections: number; rate: number }, command: string, loadSeconds: number, vinCount: number, runs: Run[]): string {
  const cpus = os.cpus();
  const machine = `${cpus[0]?.model.trim() ?? 'unknown CPU'}, ${cpus.length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB RAM, Node.js ${process.version}`;
  const cpuPerRequest = (run: Run) =>
    run.throughput.cores === null ? null : (run.throughput.cores / run.throughput.result.requestsPerSecond) * 1e6;
  const lines = [
    `Taken ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC with \`${command}\``,
    '',
    `- Machine: ${machine}; PostgreSQL, Redis, the load generator and the server share it.`,
    `- Data: ${int.format(settings.lots)} synthetic lots of ${int.format(vinCount)} VINs in PostgreSQL, loaded in ${loadSeconds.toFixed(1)} s; one server process.`,
    '',
    '| rate limiter | run | req/s | p50 ms | p99 ms | max ms | server CPU (cores) | server CPU per request (µs) |',
    '|---|---|---:|---:|---:|---:|---:|---:|',
  ];
  for (const run of runs) {
    const t = run.throughput.result;
    const p = run.paced.result;
    const perRequest = cpuPerRequest(run);
    lines.push(
      `| ${run.limiter} | ${settings.connections} connections, ${settings.duration} s | ${int.format(t.requestsPerSecond)} | ${ms(t.latency.p50)} | ${ms(t.latency.p99)} | ${ms(t.latency.max)} | ${run.throughput.cores?.toFixed(2) ?? 'n/a'} | ${perRequest === null ? 'n/a' : int.format(perRequest)} |`,
      `| ${run.limiter} | ${int.format(settings.rate)} req/s evenly spaced, ${settings.duration} s | ${int.format(p.achievedRate)} | ${ms(p.latency.p50)} | ${ms(p.latency.p99)} | ${ms(p.latency.max)} | ${run.paced.cores?.toFixed(2) ?? 'n/a'} | |`,
    );
  }
  const [redis, memory] = runs;
  if (redis && memory) {
    const a = cpuPerRequest(redis);
    const b = cpuPerRequest(memory);
    lines.push(
      '',
      `- Cost of the Redis limiter per request: ${a !== null && b !== null ? `${int.format(a - b)} µs of server CPU` : 'n/a'}, ` +
        `${ms(redis.paced.result.latency.p50 - memory.paced.result.latency.p50)} ms at the median and ` +
        `${ms(redis.paced.result.latency.p99 - memory.paced.result.latency.p99)} ms at p99 at ${int.format(settings.rate)} req/s; ` +
        `throughput ${int.format(redis.throughput.result.requestsPerSecond)} vs ${int.format(memory.throughput.result.requestsPerSecond)} req/s.`,
    );
  }
  return lines.join('\n');
}
