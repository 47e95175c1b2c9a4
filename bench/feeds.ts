/**
 * The feeds benchmark (`npm run bench:feeds -- [options]`): a Copart sales-data CSV of 200,000
 * synthetic lots pulled by a feed from a local HTTP server, against `vinhistory import` of the same
 * file (the importer as the command runs it: worker thread, its default batch), each into a fresh
 * SQLite database; then the search latency (one search after the other through the app, inject())
 * while idle and while the feed is pulled again (a new ETag: every lot read and upserted again).
 * Runs alternate (import, feed, import, feed) so that a busy machine weighs on both alike.
 * See docs/benchmarks.md.
 */
import { createReadStream, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pino from 'pino';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { createContainer, type Container } from '../src/container.ts';
import { generateLots } from '../src/dev/seed/synthetic-lots.ts';
import { BULK_LOAD_BATCH_SIZE } from '../src/ingest/import-lots.ts';
import { MemoryRateLimiter } from '../src/limits/rate/memory-rate-limiter.ts';
import { migrateToLatest, openDatabase, type Db } from '../src/storage/database.ts';
import { createRepositories } from '../src/storage/repositories/index.ts';
import { createUnboundedCustomer } from './support/bench-data.ts';
import { COPART_HEADER, copartRow, quote, writeLines } from './support/bench-files.ts';
import { summariseLatencies } from './support/latencies.ts';

const USAGE = `usage: npm run bench:feeds -- [options]

  --lots N      synthetic lots in the file (default 200000)
  --rounds N    import/feed pairs (default 2)
  --batch N     lots per transaction of the pull (default 250, as serve)
  --seconds N   seconds of idle searching, before the second pull and after it (default 10)
`;

const log = (message: string) => process.stderr.write(`${message}\n`);
const int = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

let feedBatch = 250;

async function fresh(dir: string, name: string): Promise<{ db: Db; services: Container; close: () => Promise<void> }> {
  const dataDir = path.join(dir, name);
  // FEEDS_THREAD_NICE from the environment, to compare the pull's threads at 19 (the default) and 0.
  const niceness = process.env.FEEDS_THREAD_NICE === undefined ? {} : { FEEDS_THREAD_NICE: process.env.FEEDS_THREAD_NICE };
  // FEEDS_SLICE_MS likewise: 0 writes whole batches while searches commit (the behaviour before slices).
  const slices = process.env.FEEDS_SLICE_MS === undefined ? {} : { FEEDS_SLICE_MS: process.env.FEEDS_SLICE_MS };
  const config = loadConfig({ NODE_ENV: 'test', PUBLIC_BASE_URL: 'https://bench.invalid', DATA_DIR: dataDir, LOG_LEVEL: 'silent', OUTBOUND_ALLOW_PRIVATE: 'true', ...niceness, ...slices });
  const db = await openDatabase(config.database, { backgroundCheckpoint: true });
  await migrateToLatest(db);
  const rateLimiter = new MemoryRateLimiter();
  const services = createContainer({ config, db, log: pino({ level: 'silent' }), rateLimiter, overrides: { feedTuning: { batchSize: feedBatch } } });
  return {
    db,
    services,
    close: async () => {
      await services.close();
      await rateLimiter.close();
      await db.close();
    },
  };
}

/**
 * CPU seconds used so far by the event loop's thread and by the whole process (Linux: /proc), so
 * that what a pull costs the thread that answers searches shows apart from the machine's load.
 */
function cpuSeconds(): { loop: number; process: number } | null {
  try {
    const fields = (stat: string) => stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = (stat: string) => Number(fields(stat)[11]) + Number(fields(stat)[12]);
    return { loop: ticks(readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8')) / 100, process: ticks(readFileSync('/proc/self/stat', 'utf8')) / 100 };
  } catch {
    return null;
  }
}

/**
 * CPU seconds of each of the process's threads over a pull (Linux: /proc/self/task), sampled every
 * 100 ms because the pull's threads end with it (their last 100 ms at most go uncounted). Only
 * over the pulls with no search running: reading /proc on the event loop would add to the
 * latencies measured. Each thread's niceness shows whether the pull's threads run in the background.
 */
function threadCpu(): { stop: () => string } | null {
  const read = () => {
    const threads = new Map<number, { seconds: number; nice: number }>();
    for (const tid of readdirSync('/proc/self/task')) {
      try {
        const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        threads.set(Number(tid), { seconds: (Number(fields[11]) + Number(fields[12])) / 100, nice: Number(fields[16]) });
      } catch {
        // The thread ended between the listing and the read.
      }
    }
    return threads;
  };
  try {
    const before = read();
    const last = new Map(before);
    const timer = setInterval(() => read().forEach((value, tid) => last.set(tid, value)), 100);
    return {
      stop: () => {
        clearInterval(timer);
        read().forEach((value, tid) => last.set(tid, value));
        const parts: string[] = [];
        let others = 0;
        for (const [tid, now] of last) {
          const used = now.seconds - (before.get(tid)?.seconds ?? 0);
          if (tid === process.pid) parts.unshift(`loop ${used.toFixed(1)}`);
          else if (!before.has(tid) && used >= 0.05) parts.push(`new thread ${used.toFixed(1)} (nice ${now.nice})`);
          else others += used;
        }
        return `${parts.join(', ')}, other threads ${others.toFixed(1)} CPU s`;
      },
    };
  } catch {
    return null;
  }
}

/** The pulls' batches by how long each held the write lock (vinhistory_feed_batch_write_seconds), as a line. */
async function batchLock(services: Container): Promise<string> {
  const { values } = await services.metrics.feedBatchWrite.get();
  const count = values.find((v) => v.metricName?.endsWith('_count'))?.value ?? 0;
  const sum = values.find((v) => v.metricName?.endsWith('_sum'))?.value ?? 0;
  if (count === 0) return 'none measured (batches stored on the event loop)';
  const buckets = values
    .filter((v) => v.metricName?.endsWith('_bucket') && (v.labels as Record<string, unknown>).le !== '+Inf')
    .map((v) => `<= ${Number((v.labels as Record<string, unknown>).le) * 1000} ms: ${((100 * v.value) / count).toFixed(1)}%`);
  return `${count} batches, mean ${((1000 * sum) / count).toFixed(1)} ms; ${buckets.join(', ')}`;
}

/**
 * The searches' commits' waits at the write gate over a phase (the storage's counts before and
 * after): how long a commit waited for the pull's transaction, whatever the machine's load did to
 * the latencies.
 */
function gateWaits(db: Db): () => string {
  const before = db.dialect.searchCommitWaits();
  return () => {
    const after = db.dialect.searchCommitWaits();
    if (!before || !after) return 'no write gate';
    const commits = after.commits - before.commits;
    if (commits === 0) return 'no search commit';
    const waited = after.waited - before.waited;
    const shares = after.boundsMs.map((bound, i) => {
      const upTo = after.buckets.slice(0, i + 1).reduce((a, b) => a + b, 0) - before.buckets.slice(0, i + 1).reduce((a, b) => a + b, 0);
      return `<= ${bound} ms: ${((100 * upTo) / commits).toFixed(1)}%`;
    });
    return `${commits} commits, ${waited} waited (${((100 * waited) / commits).toFixed(1)}%), mean ${((after.totalMs - before.totalMs) / commits).toFixed(3)} ms a commit, max ${after.maxMs.toFixed(2)} ms (since the start); ${shares.join(', ')}`;
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { lots: { type: 'string', default: '200000' }, rounds: { type: 'string', default: '2' }, seconds: { type: 'string', default: '10' }, batch: { type: 'string', default: '250' }, help: { type: 'boolean' } } });
  if (values.help) {
    process.stdout.write(USAGE);
    return;
  }
  const count = Number(values.lots);
  const rounds = Number(values.rounds);
  const idleSeconds = Number(values.seconds);
  feedBatch = Number(values.batch);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'vinhistory-bench-feeds-'));
  const file = path.join(dir, 'salesdata.csv');
  const vins: string[] = [];
  log(`writing ${int.format(count)} lots as Copart CSV`);
  await writeLines(file, (function* () {
    yield COPART_HEADER.map(quote).join(',');
    let index = 0;
    for (const lot of generateLots({ count, seed: 1, onVehicle: (vin) => vins.push(vin) })) yield copartRow(lot, index++);
  })());
  const bytes = (await stat(file)).size;

  let etag = 1;
  const server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/csv', etag: `"v${etag}"`, 'content-length': bytes });
    createReadStream(file).pipe(response);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/salesdata.csv`;

  const importRates: number[] = [];
  const feedRates: number[] = [];
  const loopShares: string[] = [];
  const threadShares: string[] = [];
  let searchDb: { db: Db; services: Container; close: () => Promise<void> } | null = null;
  try {
    for (let round = 0; round < rounds; round++) {
      const imported = await fresh(dir, `import-${round}`);
      let started = performance.now();
      const [result] = await imported.services.ingest.importFiles([file], { format: 'copart-csv', batchSize: BULK_LOAD_BATCH_SIZE, enrich: false, worker: true, progress: false, signal: new AbortController().signal });
      const importSeconds = (performance.now() - started) / 1000;
      importRates.push(result!.inserted / importSeconds);
      log(`round ${round + 1}: import ${int.format(result!.inserted)} lots in ${importSeconds.toFixed(1)} s (${int.format(importRates.at(-1)!)} lots/s)`);
      await imported.close();

      const pulled = await fresh(dir, `feed-${round}`);
      await pulled.services.feeds.add({ name: 'bench', url, format: 'copart-csv' });
      started = performance.now();
      const cpuBefore = cpuSeconds();
      const threads = threadCpu();
      const run = await pulled.services.feeds.runNow('bench', false);
      const feedSeconds = (performance.now() - started) / 1000;
      const cpuAfter = cpuSeconds();
      if (threads) threadShares.push(threads.stop());
      if (cpuBefore && cpuAfter) {
        const loop = cpuAfter.loop - cpuBefore.loop;
        const all = cpuAfter.process - cpuBefore.process;
        loopShares.push(`${loop.toFixed(1)} of ${all.toFixed(1)} CPU s (${((1e6 * loop) / count).toFixed(0)} µs a lot on the loop)`);
      }
      if (run.kind !== 'done' || run.result.status !== 'ok') throw new Error(`the pull failed: ${JSON.stringify(run)}`);
      feedRates.push(run.result.counts.inserted / feedSeconds);
      log(`round ${round + 1}: feed   ${int.format(run.result.counts.inserted)} lots in ${feedSeconds.toFixed(1)} s (${int.format(feedRates.at(-1)!)} lots/s)`);
      if (round === rounds - 1) searchDb = pulled;
      else await pulled.close();
    }

    // Search latency on the feed's database: idle, then while the feed is pulled again.
    const { services, db } = searchDb!;
    const customer = await createUnboundedCustomer(createRepositories(db));
    const app = await buildApp({ services, logger: false });
    await app.ready();
    let next = 0;
    const searchOnce = async () => {
      const vin = vins[(next++ * 7_919) % vins.length]!;
      const began = performance.now();
      const answer = await app.inject({ method: 'GET', url: `/api/v1/search?vin=${vin}`, headers: { authorization: customer.token } });
      if (answer.statusCode !== 200) throw new Error(`search answered ${answer.statusCode}: ${answer.body}`);
      return performance.now() - began;
    };
    // How long the event loop was held meanwhile, apart from the searches' own latency.
    const searchUntil = async (done: () => boolean) => {
      const samples: number[] = [];
      const loop = monitorEventLoopDelay({ resolution: 1 });
      loop.enable();
      while (!done()) samples.push(await searchOnce());
      loop.disable();
      return { ...summariseLatencies(samples), loopP99: loop.percentile(99) / 1e6, loopMax: loop.max / 1e6 };
    };
    for (let i = 0; i < 200; i++) await searchOnce();
    const idleEnd = performance.now() + idleSeconds * 1000;
    const idleWaits = gateWaits(db);
    const idle = await searchUntil(() => performance.now() >= idleEnd);
    const idleWaited = idleWaits();
    etag++;
    let pulling = true;
    const started = performance.now();
    const pull = services.feeds.runNow('bench', false).finally(() => (pulling = false));
    const duringWaits = gateWaits(db);
    const during = await searchUntil(() => !pulling);
    const duringWaited = duringWaits();
    const second = await pull;
    const pullSeconds = (performance.now() - started) / 1000;
    const held = await batchLock(services);
    // Idle again once the pull is over: on a shared machine the two idle figures show the noise.
    const afterEnd = performance.now() + idleSeconds * 1000;
    const after = await searchUntil(() => performance.now() >= afterEnd);
    await app.close();

    const best = (rates: number[]) => Math.max(...rates);
    const ratio = best(feedRates) / best(importRates);
    const lines = [
      `machine: ${os.cpus().length} x ${os.cpus()[0]?.model ?? 'cpu'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, node ${process.version}`,
      `file: ${int.format(count)} lots, Copart CSV, ${int.format(bytes / 2 ** 20)} MiB, served from 127.0.0.1`,
      `vinhistory import (worker, batch ${BULK_LOAD_BATCH_SIZE}): ${importRates.map((r) => int.format(r)).join(', ')} lots/s`,
      `feed pull (download, checks, import; batch ${feedBatch}): ${feedRates.map((r) => int.format(r)).join(', ')} lots/s`,
      `feed / import (best of each): ${ratio.toFixed(2)} (target >= 0.8)`,
      `event loop thread's CPU during each pull (download, checks, import; the whole process's beside it): ${loopShares.join('; ') || 'not measured (no /proc)'}`,
      `threads' CPU during each pull with no search: ${threadShares.join('; ') || 'not measured (no /proc)'}`,
      `search, idle:           ${idle.count} searches, p50 ${idle.p50.toFixed(2)} ms, p99 ${idle.p99.toFixed(2)} ms; event loop delay p99 ${idle.loopP99.toFixed(1)} ms, max ${idle.loopMax.toFixed(1)} ms`,
      `search, during a pull:  ${during.count} searches, p50 ${during.p50.toFixed(2)} ms, p99 ${during.p99.toFixed(2)} ms; event loop delay p99 ${during.loopP99.toFixed(1)} ms, max ${during.loopMax.toFixed(1)} ms (the pull: ${second.kind === 'done' ? second.result.status : second.kind}, ${pullSeconds.toFixed(1)} s)`,
      `search, idle after:     ${after.count} searches, p50 ${after.p50.toFixed(2)} ms, p99 ${after.p99.toFixed(2)} ms; event loop delay p99 ${after.loopP99.toFixed(1)} ms, max ${after.loopMax.toFixed(1)} ms`,
      `write lock per batch of the pulls: ${held}`,
      `search commits' wait at the write gate, idle: ${idleWaited}`,
      `search commits' wait at the write gate, during the pull: ${duringWaited}`,
      `p99 during / idle (the lower idle): ${(during.p99 / Math.min(idle.p99, after.p99)).toFixed(2)} (target <= 1.2)`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await searchDb?.close();
    await new Promise((done) => server.close(done));
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
