/**
 * The photo archive benchmark (`npm run bench:media -- [options]`): photos archived per second
 * by the real server from a local photo host, and the server's search latency at a fixed rate,
 * idle and while it archives. See docs/benchmarks.md for the method and the latest figures.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import pino from 'pino';
import { loadConfig } from '../src/config.ts';
import { createContainer } from '../src/container.ts';
import { summariseLatencies, type LatencySummary } from './support/latencies.ts';
import { migrateToLatest, openDatabase } from '../src/storage/database.ts';
import { createRepositories } from '../src/storage/repositories/index.ts';
import { makeImage, startImageServer, type ImageServer } from '../test/support/image-server.ts';
import { createUnboundedCustomer, loadSyntheticLots } from './support/bench-data.ts';
import { replaceDocSection } from './support/benchmarks-doc.ts';
import { Child, freePort, waitUntilReady } from './support/children.ts';
import { pacedLoad, type PacedLoadResult } from './support/paced-load.ts';

const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));
const DOC_FILE = path.join(REPO_ROOT, 'docs', 'benchmarks.md');
const HOST = '127.0.0.1';

const USAGE = `usage: npm run bench:media -- [options]

  --photos N        distinct photos to archive (default 400, 1024 x 768 JPEG)
  --lots N          synthetic lots in the database, searched meanwhile (default 20000)
  --rate N          searches per second during both latency runs (default 200)
  --duration S      seconds of the idle latency run (default 8)
  --concurrency N   MEDIA_CONCURRENCY of the server (default 8)
  --write           write the figures into docs/benchmarks.md
`;

const log = (message: string) => process.stderr.write(`${message}\n`);
const ms = (value: number) => (Number.isFinite(value) ? value.toFixed(2) : 'n/a');

let tempDir: string | null = null;
let server = null as Child | null;
let photos = null as ImageServer | null;

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: {
      photos: { type: 'string', default: '400' },
      lots: { type: 'string', default: '20000' },
      rate: { type: 'string', default: '200' },
      duration: { type: 'string', default: '8' },
      concurrency: { type: 'string', default: '8' },
      write: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return;
  }
  const settings = {
    photos: Number(values.photos),
    lots: Number(values.lots),
    rate: Number(values.rate),
    duration: Number(values.duration),
    concurrency: Number(values.concurrency),
  };
  const command = `npm run bench:media${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`;

  tempDir = await mkdtemp(path.join(os.tmpdir(), 'vinhistory-bench-media-'));
  photos = await startImageServer();
  log(`making ${settings.photos} photos`);
  let photoBytes = 0;
  for (let i = 0; i < settings.photos; i++) {
    const jpeg = await makeImage('jpeg', i, { width: 1024, height: 768 });
    photoBytes += jpeg.length;
    photos.set(`/p/${i}.jpg`, jpeg);
  }

  const port = await freePort();
  const baseUrl = `http://${HOST}:${port}`;
  const env: Record<string, string> = {
    NODE_ENV: 'production',
    DATA_DIR: path.join(tempDir, 'data'),
    PORT: String(port),
    HOST,
    PUBLIC_BASE_URL: baseUrl,
    LOG_LEVEL: 'warn',
    MEDIA_ARCHIVE: 'directory',
    MEDIA_CONCURRENCY: String(settings.concurrency),
    MEDIA_HOST_CONCURRENCY: String(settings.concurrency),
    OUTBOUND_ALLOW_PRIVATE: 'true',
  };
  const config = loadConfig(env);
  const db = await openDatabase(config.database);
  await migrateToLatest(db);
  // The synthetic lots are loaded with the archive's queue off: their photo hosts do not exist.
  const plain = createRepositories(db);
  log(`loading ${settings.lots} synthetic lots`);
  const { vins } = await loadSyntheticLots(plain, { count: settings.lots, seed: 1 });
  const { token } = await createUnboundedCustomer(plain);
  const resolution = await measureResolution(config, db, vins);
  await sql`pragma wal_checkpoint(TRUNCATE)`.execute(db.kysely);

  const childEnv = { ...process.env, ...env };
  delete childEnv.DATABASE_URL;
  delete childEnv.REDIS_URL;
  server = Child.start('the server', ['bin/vinhistory.js', 'serve'], { cwd: REPO_ROOT, env: childEnv });
  await waitUntilReady(server, `${baseUrl}/healthz`);
  const headers = { authorization: token };
  const randomPath = () => `/api/v1/search?vin=${vins[Math.floor(Math.random() * vins.length)]}`;
  const load = (seconds: number) => pacedLoad({ host: HOST, port, rate: settings.rate, durationSeconds: seconds, path: randomPath, headers });

  log(`idle: ${settings.rate} searches/s for ${settings.duration} s`);
  await load(2);
  const idleCpuStart = await server.cpuSeconds();
  const idleStart = performance.now();
  const idle = checked(await load(settings.duration));
  const idleCores = ((await server.cpuSeconds()) ?? 0) - (idleCpuStart ?? 0);
  const idleCoresPerSecond = idleCores / ((performance.now() - idleStart) / 1000);

  // Queue the photos as an import would (10 a lot), and search while the server archives them.
  const queueing = createRepositories(db, { queueMediaImages: true });
  const photoLots = [];
  for (let lot = 0; lot * 10 < settings.photos; lot++) {
    const images = [];
    for (let i = lot * 10; i < Math.min(settings.photos, lot * 10 + 10); i++) images.push(`${photos.base}/p/${i}.jpg`);
    photoLots.push({ ...(await plain.lots.findByVin(vins[lot]!))[0]!, lot_id: 900_000_000 + lot, images });
  }
  await queueing.lots.upsertBatch(photoLots);
  const queuedAt = performance.now();
  const busyCpuStart = (await server.cpuSeconds()) ?? 0;
  let busyCpuEnd = Number.NaN;
  log(`queued ${settings.photos} photos; searching at ${settings.rate}/s while the server archives them`);
  let archivedAt = Number.NaN;
  const watcher = (async () => {
    for (;;) {
      const status = await plain.media.status();
      if (status.archived + status.failed + status.retrying >= settings.photos) {
        archivedAt = performance.now();
        busyCpuEnd = (await server!.cpuSeconds()) ?? Number.NaN;
        return status;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  // The busy run lasts as long as the archiving does (at least 2 s), measured in slices.
  const busyRuns: PacedLoadResult[] = [];
  while (Number.isNaN(archivedAt) || busyRuns.length === 0) busyRuns.push(checked(await load(2)));
  const status = await watcher;
  const archiveSeconds = (archivedAt - queuedAt) / 1000;
  // The server's CPU while archiving, less what the searches took at the idle run's rate.
  const cpuPerPhotoMs = ((busyCpuEnd - busyCpuStart - idleCoresPerSecond * archiveSeconds) / settings.photos) * 1000;
  const busyLatencies = busyRuns.map((run) => run.latency);
  const busyP99 = Math.max(...busyLatencies.map((l) => l.p99));
  const busyP50 = busyLatencies.reduce((sum, l) => sum + l.p50, 0) / busyLatencies.length;

  await server.stop();
  server = null;
  await db.close();

  const cpus = os.cpus();
  const machine = `${cpus[0]?.model.trim() ?? 'unknown CPU'}, ${cpus.length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB RAM, Node.js ${process.version}`;
  const markdown = [
    `Measured ${new Date().toISOString().slice(0, 10)} with \`${command}\` on ${machine}; SQLite, directory store, the photo host and the load generator in the benchmark's process on the same machine.`,
    '',
    '| figure | value |',
    '|---|---|',
    `| photos archived (fetch, check, 2 renditions, store) | ${status.archived} of ${settings.photos} (${status.failed + status.retrying} failed), ${(photoBytes / settings.photos / 1024).toFixed(0)} KiB each on average |`,
    `| photos archived per second (MEDIA_CONCURRENCY=${settings.concurrency}) | **${(status.archived / archiveSeconds).toFixed(1)}** (${archiveSeconds.toFixed(1)} s for all) |`,
    `| server CPU per photo archived (the searches' share taken out) | ${cpuPerPhotoMs.toFixed(0)} ms: at most ${(1000 / cpuPerPhotoMs).toFixed(1)} photos/s per core |`,
    `| stored per photo (original + renditions) | ${(status.bytes / Math.max(1, status.objects) / 1024).toFixed(0)} KiB |`,
    `| search p50 / p99 idle, ${settings.rate}/s | ${ms(idle.latency.p50)} / ${ms(idle.latency.p99)} ms |`,
    `| search p50 / p99 while archiving, ${settings.rate}/s (worst 2 s slice) | ${ms(busyP50)} / ${ms(busyP99)} ms |`,
    `| p99 while archiving / idle | ${(busyP99 / idle.latency.p99).toFixed(2)} |`,
    `| a search's lots read (findByVin), in process, p50 / p99 | ${ms(resolution.read.p50 * 1000)} / ${ms(resolution.read.p99 * 1000)} µs |`,
    `| the resolution step (resolveLots) on those lots, every photo archived, p50 / p99 | ${ms(resolution.resolve.p50 * 1000)} / ${ms(resolution.resolve.p99 * 1000)} µs (${resolution.images.toFixed(1)} photos a search on average) |`,
  ].join('\n');
  process.stdout.write(`\n${markdown}\n`);
  if (values.write) {
    await replaceDocSection(DOC_FILE, 'media', '## Latest figures: photo archive (`npm run bench:media`)', markdown);
    log(`wrote the figures into ${path.relative(process.cwd(), DOC_FILE)}`);
  }
}

/**
 * The cost the archive adds to every search: the resolution step on a search's lots, with every
 * synthetic photo archived (its worst case: every URL replaced), beside reading the lots.
 */
async function measureResolution(config: ReturnType<typeof loadConfig>, db: Awaited<ReturnType<typeof openDatabase>>, vins: string[]) {
  const services = createContainer({ config, db, log: pino({ level: 'silent' }) });
  try {
    log('queueing the synthetic lots\' photos and marking them archived, to time the resolution step');
    await services.media.backfill({ pageSize: 2000 });
    await sql`update media_images set state = 'archived', hash = printf('%064x', id), ext = 'jpg'`.execute(db.kysely);
    const repos = createRepositories(db);
    const read: number[] = [];
    const resolve: number[] = [];
    let images = 0;
    for (let i = 0; i < 6000; i++) {
      const vin = vins[Math.floor(Math.random() * vins.length)]!;
      const t0 = performance.now();
      const lots = await repos.lots.findByVin(vin);
      const t1 = performance.now();
      const resolved = await services.media.resolveLots(lots);
      const t2 = performance.now();
      if (i < 1000) continue; // warm-up
      read.push(t1 - t0);
      resolve.push(t2 - t1);
      images += resolved.reduce((sum, lot) => sum + lot.images.length, 0);
    }
    // The server's searches start from an empty queue: the photos it archives are the benchmark's.
    await sql`delete from media_images`.execute(db.kysely);
    return { read: summariseLatencies(read), resolve: summariseLatencies(resolve), images: images / read.length } satisfies {
      read: LatencySummary;
      resolve: LatencySummary;
      images: number;
    };
  } finally {
    await services.close();
  }
}

function checked(result: PacedLoadResult): PacedLoadResult {
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(`searches failed: ${JSON.stringify(result.statusCodes)} ${result.errorMessages.join('; ')}\n${server?.recentOutput ?? ''}`);
  }
  return result;
}

try {
  await main();
} finally {
  await server?.stop();
  await photos?.close();
  if (tempDir) await rm(tempDir, { recursive: true, force: true });
}
