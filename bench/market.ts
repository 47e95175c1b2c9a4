/**
 * The market benchmark (`npm run bench:market -- [options]`): catalogue queries (filtered, masked
 * VIN, deep pages) and market values of the real server on SQLite with 1,000,000 synthetic lots,
 * beside GET /api/v1/search on the same server in the same run: closed loads (autocannon) for
 * throughput, and a fixed rate (200 requests/s by default, evenly spaced) for latency.
 * docs/benchmarks.md has the method and the figures.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { VEHICLE_MODELS } from '../src/dev/seed/synthetic-catalogue.ts';
import { replaceDocSection } from './support/benchmarks-doc.ts';
import { Child, freePort, waitUntilReady } from './support/children.ts';
import { pacedLoad } from './support/paced-load.ts';
import { prepareSearchDatabase } from './support/search-data.ts';
import { measureThroughput } from './support/throughput.ts';
import type { LatencySummary } from './support/latencies.ts';

const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));
const DOC_FILE = path.join(REPO_ROOT, 'docs', 'benchmarks.md');
const HOST = '127.0.0.1';
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
    write: { type: 'boolean', default: false },
  },
});
const settings = {
  lots: Number(values.lots),
  duration: Number(values.duration),
  warmup: Number(values.warmup),
  connections: Number(values.connections),
  rate: Number(values.rate),
  seed: Number(values.seed),
  dataDir: values['data-dir'] ?? null,
};
for (const [name, value] of Object.entries(settings)) if (typeof value === 'number' && !(Number.isInteger(value) && value > 0)) throw new Error(`--${name} must be a positive whole number`);

const pick = <T>(list: readonly T[]): T => list[Math.floor(Math.random() * list.length)]!;
const DAMAGES = ['FRONT END', 'REAR END', 'SIDE', 'ALL OVER', 'HAIL'];

async function main(): Promise<void> {
  const tempDir = await mkdtemp(path.join(os.tmpdir(), 'vinhistory-bench-market-'));
  const dataDir = settings.dataDir ?? path.join(tempDir, 'data');
  const port = await freePort();
  const baseUrl = `http://${HOST}:${port}`;
  const serverEnv: Record<string, string> = { NODE_ENV: 'production', DATA_DIR: dataDir, PORT: String(port), HOST, PUBLIC_BASE_URL: baseUrl, LOG_LEVEL: 'warn' };
  const { vins, token, loadSeconds } = await prepareSearchDatabase({ lots: settings.lots, seed: settings.seed, dataDir: settings.dataDir }, serverEnv, log);
  const env = { ...process.env, ...serverEnv };
  delete env.DATABASE_URL;
  delete env.REDIS_URL;
  const server = Child.start('the server', ['bin/vinhistory.js', 'serve'], { cwd: REPO_ROOT, env });
  try {
    await waitUntilReady(server, `${baseUrl}/healthz`);
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
    const rows: string[] = [];
    const figures: Record<string, { closed: number; p99: LatencySummary }> = {};
    for (const [name, path] of Object.entries(mixes)) {
      log(`${name}: closed load, ${settings.connections} connections, ${settings.duration} s`);
      const closed = await measureThroughput({ url: baseUrl, connections: settings.connections, durationSeconds: settings.duration, warmupSeconds: settings.warmup, path, headers });
      log(`${name}: ${settings.rate} requests/s, ${settings.duration} s`);
      const paced = await pacedLoad({ host: HOST, port, rate: settings.rate, durationSeconds: settings.duration, path, headers });
      const bad = closed.non2xx + closed.errors + paced.non2xx + paced.errors;
      figures[name] = { closed: closed.requestsPerSecond, p99: paced.latency };
      rows.push(
        `| ${name} | ${int.format(closed.requestsPerSecond)} | ${ms(closed.latency.p50)} / ${ms(closed.latency.p99)} | ${ms(paced.latency.p50)} / ${ms(paced.latency.p99)} / ${ms(paced.latency.max)} | ${bad === 0 ? 'none' : `${bad} (${JSON.stringify({ ...closed.statusCodes, ...paced.statusCodes })})`} |`,
      );
    }
    const search = figures['GET /api/v1/search (by VIN)']!.closed;
    const ratios = Object.entries(figures)
      .filter(([name]) => name.startsWith('catalogue'))
      .map(([name, figure]) => `${name}: ${(figure.closed / search).toFixed(2)}`);
    const markdown = [
      `Command: \`npm run bench:market -- ${process.argv.slice(2).join(' ')}\`; ${int.format(settings.lots)} synthetic lots (seed ${settings.seed}) of ${int.format(vins.length)} VINs on SQLite${loadSeconds === null ? '' : `, loaded in ${loadSeconds.toFixed(0)} s`}; ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'CPU'}, Node ${process.version}. Measured while the machine was shared; to be re-run quiet.`,
      '',
      `| query | closed load, req/s (${settings.connections} connections) | closed p50 / p99 ms | at ${settings.rate} req/s: p50 / p99 / max ms | errors |`,
      '|---|---|---|---|---|',
      ...rows,
      '',
      `Catalogue throughput against the search's in the same run: ${ratios.join('; ')}.`,
    ].join('\n');
    process.stdout.write(`\n${markdown}\n`);
    if (values.write) await replaceDocSection(DOC_FILE, 'market', '## Latest figures: market', markdown);
  } finally {
    await server.stop();
    if (settings.dataDir === null) await rm(tempDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exitCode = 1;
});
