/**
 * The photo archive benchmark (`npm run bench:media -- [options]`): photos archived per second
 * by the real server from a local photo host, and the server's search latency at a fixed rate,
 * idle and while it archives. See docs/benchmarks.md for the method and the latest figures.
 * The searches come from a process of their own (support/load-process.ts), evenly spaced, in one
 * run throughout which the photos are queued in rounds with idle windows between them: the p99 of
 * the searches made while archiving against the idle windows' is the figure that counts (issue
 * 15), and the worst slice shows the bursts; `--server-root` runs another checkout's server under
 * the same load, to compare.
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import pino from 'pino';
import { loadConfig } from '../src/config.ts';
import type { Lot } from '../src/domain/lot.ts';
import { createContainer, lotsWrittenHooks } from '../src/container.ts';
import { summariseLatencies, type LatencySummary } from './support/latencies.ts';
import { migrateToLatest, openDatabase } from '../src/storage/database.ts';
import { createRepositories } from '../src/storage/repositories/index.ts';
import { makeImage, startImageServer, type ImageServer } from '../test/support/image-server.ts';
import { createUnboundedCustomer, loadSyntheticLots } from './support/bench-data.ts';
import { replaceDocSection } from './support/benchmarks-doc.ts';
import { Child, freePort, waitUntilReady } from './support/children.ts';
import { cpuByStack, type ProfileStack } from './support/cpu-profile.ts';
import { LoadProcess, type LoadResult } from './support/load-process.ts';

const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));
const DOC_FILE = path.join(REPO_ROOT, 'docs', 'benchmarks.md');
const HOST = '127.0.0.1';

const USAGE = `usage: npm run bench:media -- [options]

  --photos N        distinct photos to archive (default 400, 1024 x 768 JPEG)
  --lots N          synthetic lots in the database, searched meanwhile (default 20000)
  --rate N          searches per second during both latency runs (default 200)
  --duration S      seconds of each idle window: one before each round and one after the last (default 8)
  --rounds N        the photos are queued in N rounds, an idle window before each (default 4)
  --concurrency N   MEDIA_CONCURRENCY of the server (default 8)
  --image-share F   MEDIA_IMAGE_SHARE of the server, 0.01 to 1 (default: the server's, 0.5)
  --slice S         seconds of each slice of the archiving run, whose worst p99 is shown beside
                    the whole run's (default 2)
  --profile         profile the server's own process (node --cpu-prof) and print where its CPU
                    goes, the archive's share (stacks under src/media/, the outbound client, the
                    IPC channel to the image process) apart from the searches'
  --server-root DIR run the server from another checkout (an older commit, to compare with;
                    its node_modules and migrations must match this one's)
  --write           write the figures into docs/benchmarks.md
`;

const log = (message: string) => process.stderr.write(`${message}\n`);
const ms = (value: number) => (Number.isFinite(value) ? value.toFixed(2) : 'n/a');

let tempDir: string | null = null;
let server = null as Child | null;
let photos = null as ImageServer | null;
let load = null as LoadProcess | null;

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: {
      photos: { type: 'string', default: '400' },
      lots: { type: 'string', default: '20000' },
      rate: { type: 'string', default: '200' },
      duration: { type: 'string', default: '8' },
      concurrency: { type: 'string', default: '8' },
      'image-share': { type: 'string' },
      slice: { type: 'string', default: '2' },
      rounds: { type: 'string', default: '4' },
      'server-root': { type: 'string' },
      profile: { type: 'boolean', default: false },
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
    // The server's own default when not given: the shell's MEDIA_IMAGE_SHARE must not decide a run.
    imageShare: values['image-share'] ?? String(loadConfig({}).media.imageShare),
    slice: Number(values.slice),
    rounds: Number(values.rounds),
    serverRoot: values['server-root'] ? path.resolve(values['server-root']) : REPO_ROOT,
  };
  if (values.write && settings.serverRoot !== REPO_ROOT) throw new Error('--write records this checkout\'s figures: drop --server-root');
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
    MEDIA_IMAGE_SHARE: settings.imageShare,
    MEDIA_HOST_CONCURRENCY: String(settings.concurrency),
    OUTBOUND_ALLOW_PRIVATE: 'true',
  };
  const config = loadConfig(env);
  const db = await openDatabase(config.database);
  await migrateToLatest(db);
  // The synthetic lots are loaded with the archive's queue off: their photo hosts do not exist.
  const plain = createRepositories(db, { lotsWritten: lotsWrittenHooks({ photoArchive: false }) });
  log(`loading ${settings.lots} synthetic lots`);
  const { vins } = await loadSyntheticLots(plain, { count: settings.lots, seed: 1 });
  const { token } = await createUnboundedCustomer(plain);
  const resolution = await measureResolution(config, db, vins);
  await sql`pragma wal_checkpoint(TRUNCATE)`.execute(db.kysely);

  const childEnv = { ...process.env, ...env };
  delete childEnv.DATABASE_URL;
  delete childEnv.REDIS_URL;
  const profileDir = values.profile ? path.join(tempDir, 'profile') : null;
  server = Child.start('the server', [...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []), 'bin/vinhistory.js', 'serve'], {
    cwd: settings.serverRoot,
    env: childEnv,
  });
  await waitUntilReady(server, `${baseUrl}/healthz`);
  load = await LoadProcess.start({ host: HOST, port, pathPrefix: '/api/v1/search?vin=', values: vins, headers: { authorization: token } });
  const serverCpu = async () => (await processTreeCpuSeconds(server!.pid!)).total;
  const serverOwnCpu = async () => (await processTreeCpuSeconds(server!.pid!)).own;

  log(`warm-up, and the searches' own CPU: ${settings.rate} searches/s for ${settings.duration} s (load average ${loadAverage()})`);
  checked(await load.run(settings.rate, 2));
  const idleLoadAverage = loadAverage();
  const idleCpuStart = await serverCpu();
  const idleOwnCpuStart = await serverOwnCpu();
  const idleGcStart = await gcTotals(baseUrl);
  const first = checked(await load.run(settings.rate, settings.duration));
  const idleGc = gcBetween(idleGcStart, await gcTotals(baseUrl), first.seconds);
  const idleCoresPerSecond = ((await serverCpu()) - idleCpuStart) / first.seconds;
  const idleOwnCoresPerSecond = ((await serverOwnCpu()) - idleOwnCpuStart) / first.seconds;

  // The photos as an import queues them (10 a lot), in rounds of whole lots.
  const queueing = createRepositories(db, { lotsWritten: lotsWrittenHooks({ photoArchive: true }) });
  const photoLots: Lot[] = [];
  for (let lot = 0; lot * 10 < settings.photos; lot++) {
    const images = [];
    for (let i = lot * 10; i < Math.min(settings.photos, lot * 10 + 10); i++) images.push(`${photos.base}/p/${i}.jpg`);
    photoLots.push({ ...(await plain.lots.findByVin(vins[lot]!))[0]!, lot_id: 900_000_000 + lot, images });
  }
  const rounds = Math.min(settings.rounds, photoLots.length);
  const roundLots = Array.from({ length: rounds }, (_, round) =>
    photoLots.slice(Math.round((round * photoLots.length) / rounds), Math.round(((round + 1) * photoLots.length) / rounds)),
  );

  // One run of searches throughout, on the same connections: idle windows of --duration seconds
  // between rounds of archiving, so that whatever else the shared machine does weighs on both
  // alike. Each search is counted in the window its due time falls in (clock: ms since the epoch).
  const epochNow = () => performance.timeOrigin + performance.now();
  const windows: { kind: 'idle' | 'busy'; from: number; to: number }[] = [];
  const busyLoadAverageStart = loadAverage();
  const busyGcStart = await gcTotals(baseUrl);
  let busyCpu = 0;
  let busyOwnCpu = 0;
  let archiveSeconds = 0;
  let done = 0;
  let status = await plain.media.status();
  const run = load.runUntilStopped(settings.rate);
  const idleWindow = async () => {
    // A moment for the last photo's records, and the searches already under way, to settle.
    const from = epochNow() + 250;
    await new Promise((resolve) => setTimeout(resolve, settings.duration * 1000));
    windows.push({ kind: 'idle', from, to: epochNow() });
  };
  for (const [round, lots] of roundLots.entries()) {
    await idleWindow();
    const photosInRound = lots.reduce((sum, lot) => sum + lot.images.length, 0);
    log(`round ${round + 1} of ${rounds}: ${photosInRound} photos queued (load average ${loadAverage()})`);
    const cpuStart = await serverCpu();
    const ownCpuStart = await serverOwnCpu();
    const from = epochNow();
    await queueing.lots.upsertBatch(lots);
    done += photosInRound;
    for (;;) {
      status = await plain.media.status();
      if (status.archived + status.failed + status.retrying >= done) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const to = epochNow();
    windows.push({ kind: 'busy', from, to });
    archiveSeconds += (to - from) / 1000;
    busyCpu += (await serverCpu()) - cpuStart;
    busyOwnCpu += (await serverOwnCpu()) - ownCpuStart;
  }
  await idleWindow();
  run.stop();
  const all = checked(await run.result);
  const busyGc = gcBetween(busyGcStart, await gcTotals(baseUrl), all.seconds);
  const pausedSeconds = await archivePaused(baseUrl);
  const busyLoadAverageEnd = loadAverage();
  // The server's CPU (its image process included) while archiving, less the searches' share at the first run's rate.
  const cpuPerPhotoMs = ((busyCpu - idleCoresPerSecond * archiveSeconds) / settings.photos) * 1000;
  // The part of it in the server's own process (the claims and records, the hand-over to the image process).
  const ownCpuPerPhotoMs = ((busyOwnCpu - idleOwnCoresPerSecond * archiveSeconds) / settings.photos) * 1000;

  // Each search into its window, and each window into slices of --slice seconds (a last one under half a slice dropped).
  const startedAt = all.startedAtEpochMs;
  const perWindow = windows.map(() => [] as { due: number; latency: number }[]);
  all.due.forEach((due, i) => {
    const at = startedAt + due;
    const w = windows.findIndex((window) => at >= window.from && at < window.to);
    if (w >= 0) perWindow[w]!.push({ due: at, latency: all.latency[i]! });
  });
  const sliced = (w: number) => {
    const { from, to } = windows[w]!;
    const count = Math.max(1, Math.round((to - from) / (settings.slice * 1000)));
    const groups = Array.from({ length: count }, () => [] as number[]);
    for (const search of perWindow[w]!) groups[Math.min(count - 1, Math.floor((search.due - from) / (settings.slice * 1000)))]!.push(search.latency);
    return groups.filter((group) => group.length > 0).map((group) => summariseLatencies(group));
  };
  const of = (kind: 'idle' | 'busy') => windows.flatMap((window, w) => (window.kind === kind ? [w] : []));
  const idleLatency = summariseLatencies(of('idle').flatMap((w) => perWindow[w]!.map((search) => search.latency)));
  const busyLatency = summariseLatencies(of('busy').flatMap((w) => perWindow[w]!.map((search) => search.latency)));
  const idleSlices = of('idle').flatMap(sliced);
  const busySlices = of('busy').flatMap(sliced);
  const busyP99 = Math.max(...busySlices.map((l) => l.p99));
  const idleWorstP99 = Math.max(...idleSlices.map((l) => l.p99));
  // The issue's figure: the p99 of every search made while the server archived, against idle's.
  const ratio = busyLatency.p99 / idleLatency.p99;
  const series = (list: LatencySummary[]) => list.map((l) => `${ms(l.p50)}/${ms(l.p99)}/${ms(l.max)}`).join(' ');
  log(
    `p50/p99/max by window, ms: ${windows.map((window, w) => `${window.kind} ${((window.to - window.from) / 1000).toFixed(1)} s: ${series(sliced(w))}`).join('; ')}`,
  );

  await load.close();
  load = null;
  await server.stop();
  server = null;
  await db.close();

  const cpus = os.cpus();
  const machine = `${cpus[0]?.model.trim() ?? 'unknown CPU'}, ${cpus.length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB RAM, Node.js ${process.version}`;
  const markdown = [
    `Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} with \`${command}\` on ${machine}, load average ${idleLoadAverage} idle, ${busyLoadAverageStart} to ${busyLoadAverageEnd} while archiving; SQLite, directory store, the photo host in the benchmark's process and the load generator in a process of its own, on the same machine${settings.serverRoot === REPO_ROOT ? '' : `; the server from ${settings.serverRoot}`}.`,
    '',
    '| figure | value |',
    '|---|---|',
    `| photos archived (fetch, check, 2 renditions, store) | ${status.archived} of ${settings.photos} (${status.failed + status.retrying} failed), ${(photoBytes / settings.photos / 1024).toFixed(0)} KiB each on average |`,
    `| photos archived per second (MEDIA_CONCURRENCY=${settings.concurrency}, MEDIA_IMAGE_SHARE=${settings.imageShare}) | **${(status.archived / archiveSeconds).toFixed(1)}** (${archiveSeconds.toFixed(1)} s for all, in ${rounds} rounds) |`,
    `| server CPU per photo archived (the searches' share taken out) | ${cpuPerPhotoMs.toFixed(0)} ms: at most ${(1000 / cpuPerPhotoMs).toFixed(1)} photos/s per core; ${ownCpuPerPhotoMs.toFixed(1)} ms of it in the server's own process |`,
    `| photos' waits for a late event loop (the archive yielding, summed over photos waiting side by side) | ${pausedSeconds === null ? 'n/a (a server without the pacer)' : `${pausedSeconds.toFixed(1)} s`} |`,
    `| stored per photo (original + renditions) | ${(status.bytes / Math.max(1, status.objects) / 1024).toFixed(0)} KiB |`,
    `| search p50 / p99 idle, ${settings.rate}/s: ${rounds + 1} windows of ${settings.duration} s, before, between and after the rounds | ${ms(idleLatency.p50)} / ${ms(idleLatency.p99)} ms (${idleLatency.count} searches) |`,
    `| search p50 / p99 while archiving, ${settings.rate}/s: every round, from its queueing to its last photo | ${ms(busyLatency.p50)} / ${ms(busyLatency.p99)} ms (max ${ms(busyLatency.max)} ms, ${busyLatency.count} searches) |`,
    `| **search p99 while archiving / idle** (the issue's figure: at most 1.2) | **${ratio.toFixed(2)}**: ${ratio <= 1.2 ? 'met' : 'missed'} |`,
    `| worst ${settings.slice} s slice while archiving: p99, and / idle p99 | ${ms(busyP99)} ms, ${(busyP99 / idleLatency.p99).toFixed(2)} (idle's own worst slice: ${ms(idleWorstP99)} ms, ${(idleWorstP99 / idleLatency.p99).toFixed(2)}) |`,
    `| the server's garbage collections, the first idle run / the interleaved run | ${idleGc} / ${busyGc} |`,
    `| a search's lots read (findByVin), in process, p50 / p99 | ${ms(resolution.read.p50 * 1000)} / ${ms(resolution.read.p99 * 1000)} µs |`,
    `| the resolution step (resolveLots) on those lots, every photo archived, p50 / p99 | ${ms(resolution.resolve.p50 * 1000)} / ${ms(resolution.resolve.p99 * 1000)} µs (${resolution.images.toFixed(1)} photos a search on average) |`,
  ].join('\n');
  process.stdout.write(`\n${markdown}\n`);
  if (profileDir) process.stdout.write(`\n${await archiveProfile(profileDir, settings.serverRoot, settings.photos)}\n`);
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

/**
 * The server's own CPU by what its stacks were doing, over its whole life (start-up, the idle run,
 * the archiving): the archive's parts per photo, the searches and start-up together as the rest.
 * Work resumed from a socket or the IPC channel has no caller on its stack, hence the kinds by
 * the modules on it (undici: the fetches; Node's child_process internals: the IPC channel).
 */
async function archiveProfile(profileDir: string, serverRoot: string, photoCount: number): Promise<string> {
  // CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile: thread 0 is the main thread.
  const main = (await readdir(profileDir)).find((file) => /\.\d+\.0\.\d+\.cpuprofile$/.test(file));
  if (!main) throw new Error(`the server wrote no main-thread CPU profile into ${profileDir}`);
  const media = /^(src|dist)\/media\//;
  const { busyMs, kinds } = await cpuByStack(path.join(profileDir, main), serverRoot, (stack) => {
    const innermost = stack[0]?.functionName ?? '';
    if (innermost === '(garbage collector)' || innermost === '(program)') return innermost;
    const on = (test: (frame: ProfileStack[number]) => boolean) => stack.some(test);
    if (on((frame) => frame.file.startsWith('node:internal/child_process'))) return 'archive: the IPC channel to the image process';
    if (on((frame) => frame.file.startsWith('undici/') || /^(src|dist)\/outbound\//.test(frame.file))) return 'archive: fetching (undici, the outbound guard)';
    if (on((frame) => /^(src|dist)\/media\/stores\//.test(frame.file))) return 'archive: the store';
    if (on((frame) => /media-queue|media-repository/.test(frame.file) && /^(claim|release|markArchived|markFailed|findObject)/.test(frame.functionName))) {
      return 'archive: the database (claims, records)';
    }
    if (on((frame) => media.test(frame.file) && !/resolve/i.test(frame.functionName))) return 'archive: other (archiver, image process client)';
    return 'the rest (start-up, searches, metrics)';
  });
  return [
    `The server's own process, CPU profile over its whole life: busy ${(busyMs / 1000).toFixed(2)} s.`,
    '',
    '| stacks | ms | per photo, ms |',
    '|---|---:|---:|',
    ...kinds.map(({ kind, ms }) => `| ${kind} | ${ms.toFixed(0)} | ${kind.startsWith('archive') ? (ms / photoCount).toFixed(2) : ''} |`),
  ].join('\n');
}

function checked(result: LoadResult): LoadResult {
  const non2xx = Object.entries(result.statusCodes).some(([code]) => !code.startsWith('2'));
  if (non2xx || result.errors > 0) {
    throw new Error(`searches failed: ${JSON.stringify(result.statusCodes)} ${result.errorMessages.join('; ')}\n${server?.recentOutput ?? ''}`);
  }
  return result;
}

const loadAverage = () => os.loadavg()[0]!.toFixed(1);

interface GcTotals {
  /** Count and seconds per kind (major, minor, incremental, weakcb), since the server started. */
  [kind: string]: { count: number; seconds: number };
}

/** The server's garbage collection so far, from its /metrics (prom-client's default metrics; loopback may read them). */
async function gcTotals(baseUrl: string): Promise<GcTotals> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  const totals: GcTotals = {};
  for (const match of text.matchAll(/^vinhistory_nodejs_gc_duration_seconds_(sum|count)\{kind="(\w+)"\} ([\d.e+-]+)$/gm)) {
    const entry = (totals[match[2]!] ??= { count: 0, seconds: 0 });
    if (match[1] === 'sum') entry.seconds = Number(match[3]);
    else entry.count = Number(match[3]);
  }
  return totals;
}

/** Seconds photos waited for the server's event loop to keep up (archive-pacer.ts), null from a server without the pacer. */
async function archivePaused(baseUrl: string): Promise<number | null> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  const match = /^vinhistory_media_paused_seconds_total ([\d.e+-]+)$/m.exec(text);
  return match ? Number(match[1]) : null;
}

/** Major and minor collections between two readings, per second of the run: where a tail could come from inside the server. */
function gcBetween(from: GcTotals, to: GcTotals, seconds: number): string {
  const part = (kind: string) => {
    const count = (to[kind]?.count ?? 0) - (from[kind]?.count ?? 0);
    const ms = ((to[kind]?.seconds ?? 0) - (from[kind]?.seconds ?? 0)) * 1000;
    return `${kind} ${(count / seconds).toFixed(1)}/s, ${count > 0 ? (ms / count).toFixed(1) : '0'} ms each`;
  };
  return `${part('major')}; ${part('minor')}`;
}

/**
 * CPU seconds (user + system) of a process and every process under it (the server's image
 * process), from /proc: a child's CPU counts towards its parent's only once it has exited.
 */
async function processTreeCpuSeconds(root: number): Promise<{ own: number; total: number }> {
  const stats = new Map<number, { parent: number; seconds: number }>();
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = await readFile(`/proc/${entry}/stat`, 'utf8');
      // Fields after the command name (which may hold spaces) start at field 3: the parent is
      // field 4, utime and stime fields 14 and 15, in clock ticks (100 a second on Linux).
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      stats.set(Number(entry), { parent: Number(fields[1]), seconds: (Number(fields[11]) + Number(fields[12])) / 100 });
    } catch {
      // The process ended while the list was read.
    }
  }
  let total = 0;
  const within = new Set([root]);
  // A process's children have higher ids than it only until ids wrap: go round until nothing is added.
  for (let added = true; added; ) {
    added = false;
    for (const [pid, { parent }] of stats) {
      if (!within.has(pid) && within.has(parent)) {
        within.add(pid);
        added = true;
      }
    }
  }
  for (const pid of within) total += stats.get(pid)?.seconds ?? 0;
  return { own: stats.get(root)?.seconds ?? 0, total };
}

try {
  await main();
} finally {
  await load?.close();
  await server?.stop();
  await photos?.close();
  if (tempDir) await rm(tempDir, { recursive: true, force: true });
}
