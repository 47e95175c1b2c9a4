/**
 * The feeds benchmark (`npm run bench:feeds -- [options]`): a Copart sales-data CSV of 200,000
 * synthetic lots pulled by a feed from a local HTTP server, against `vinhistory import` of the same
 * file (the importer as the command runs it: worker thread, its default batch), each into a fresh
 * SQLite database; then the search latency (one search after the other through the app, inject())
 * while idle and while the feed is pulled again (a new ETag: every lot read and upserted again).
 * Runs alternate (import, feed, import, feed) so that a busy machine weighs on both alike.
 * --isolate parts what a pull does to the searches into its write lock and its CPU: beside each
 * pull on the searches' database, the same pull into another database and threads spinning at the
 * pull's priority (FEEDS_THREAD_PRIORITY). --rate adds the same phases with searches started on a fixed schedule.
 * The pulls give way to the searches in flight (FEEDS_YIELD_MS; 0 in the environment: they never
 * do, the behaviour before it, to alternate A/B in one tree); each pull's line says how long its
 * threads paused and how often the floor cut a pause short.
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
import { Worker } from 'node:worker_threads';
import pino from 'pino';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { createContainer, type Container } from '../src/container.ts';
import { generateLots } from '../src/dev/seed/synthetic-lots.ts';
import { BULK_LOAD_BATCH_SIZE } from '../src/ingest/import-lots.ts';
import { MemoryRateLimiter } from '../src/limits/rate/memory-rate-limiter.ts';
import { migrateToLatest, openDatabase, WriteGate, type Db } from '../src/storage/database.ts';
import { createRepositories } from '../src/storage/repositories/index.ts';
import { CHRT } from '../src/linux-tools.ts';
import { lowerOwnPriorityCode, type RequestsInFlight, type ThreadPriority } from '../src/worker-threads.ts';
import { createUnboundedCustomer } from './support/bench-data.ts';
import { COPART_HEADER, copartRow, quote, writeLines } from './support/bench-files.ts';
import { summariseLatencies } from './support/latencies.ts';

const USAGE = `usage: npm run bench:feeds -- [options]

  --lots N      synthetic lots in the file (default 200000)
  --rounds N    import/feed pairs (default 2)
  --batch N     lots per transaction of the pull (default 250, as serve)
  --seconds N   seconds of idle searching, before the second pull and after it (default 10)
  --rate N,...  after the closed loop, the same phases with searches started N a second on a fixed
                schedule (open loop: each latency from its due time), e.g. --rate 200,1000
  --isolate     two more phases beside each pull's: the same pull into another database (no write
                lock in common, the same CPU work) and threads at the pull's priority spinning for
                as long as the pull took (its CPU demand alone)
  --spin-threads N  spinning threads of --isolate (default 1: the pull's threads take about a core)
`;

const log = (message: string) => process.stderr.write(`${message}\n`);
const int = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

let feedBatch = 250;

/** A thread that lowers its own priority as the pull's threads do (per thread on Linux) and spins until told to stop. */
const spinCode = (priority: ThreadPriority) => `
const { parentPort, workerData } = require('node:worker_threads');
${lowerOwnPriorityCode(priority)}.then(() => {
  const stop = new Int32Array(workerData.stop);
  parentPort.postMessage('spinning');
  let x = 0;
  while (Atomics.load(stop, 0) === 0) for (let i = 0; i < 100000; i++) x = (x * 31 + i) | 0;
});
`;

/** The pull's threads' priority from the environment (FEEDS_THREAD_PRIORITY, or FEEDS_THREAD_NICE as before it), to compare them. */
function priorityEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of ['FEEDS_THREAD_PRIORITY', 'FEEDS_THREAD_NICE'] as const) if (process.env[name] !== undefined) env[name] = process.env[name];
  return env;
}

const describePriority = (priority: ThreadPriority) => (priority.idle ? (CHRT ? 'SCHED_IDLE' : `nice ${priority.niceness} (no chrt)`) : `nice ${priority.niceness}`);

/**
 * `requestsInFlight`: the searches' app's count, for the isolating database's pulls, so that they
 * give way to the searches as the pull on the searches' database does (the same work, paused alike).
 */
async function fresh(dir: string, name: string, requestsInFlight?: RequestsInFlight): Promise<{ db: Db; services: Container; close: () => Promise<void> }> {
  const dataDir = path.join(dir, name);
  // FEEDS_SLICE_MS likewise: 0 writes whole batches while searches commit (the behaviour before slices);
  // FEEDS_YIELD_MS=0: a pull that never gives way to the searches in flight (the behaviour before it).
  const slices = process.env.FEEDS_SLICE_MS === undefined ? {} : { FEEDS_SLICE_MS: process.env.FEEDS_SLICE_MS };
  const yieldMs = process.env.FEEDS_YIELD_MS === undefined ? {} : { FEEDS_YIELD_MS: process.env.FEEDS_YIELD_MS };
  const config = loadConfig({ NODE_ENV: 'test', PUBLIC_BASE_URL: 'https://bench.invalid', DATA_DIR: dataDir, LOG_LEVEL: 'silent', OUTBOUND_ALLOW_PRIVATE: 'true', ...priorityEnv(), ...slices, ...yieldMs });
  const db = await openDatabase(config.database, { backgroundCheckpoint: true });
  await migrateToLatest(db);
  const rateLimiter = new MemoryRateLimiter();
  const services = createContainer({ config, db, log: pino({ level: 'silent' }), rateLimiter, overrides: { feedTuning: { batchSize: feedBatch }, ...(requestsInFlight ? { requestsInFlight } : {}) } });
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
    const threads = new Map<number, { seconds: number; nice: number; policy: string }>();
    for (const tid of readdirSync('/proc/self/task')) {
      try {
        const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        threads.set(Number(tid), { seconds: (Number(fields[11]) + Number(fields[12])) / 100, nice: Number(fields[16]), policy: policyOf(tid) });
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
        // The threads that were there before the pull, by id (V8's platform threads for every
        // isolate's GC, libuv's pool, SQLite's checkpointing thread...), each as it is scheduled.
        const busy: string[] = [];
        for (const [tid, now] of last) {
          const used = now.seconds - (before.get(tid)?.seconds ?? 0);
          const priority = now.policy === 'idle' ? 'SCHED_IDLE' : `nice ${now.nice}`;
          if (tid === process.pid) parts.unshift(`loop ${used.toFixed(1)}`);
          else if (!before.has(tid) && used >= 0.05) parts.push(`new thread ${used.toFixed(1)} (${priority})`);
          else {
            others += used;
            if (used >= 0.1) busy.push(`${tid - process.pid}: ${used.toFixed(1)} (${priority})`);
          }
        }
        return `${parts.join(', ')}, other threads ${others.toFixed(1)} CPU s (by thread id after the process's: ${busy.join(', ') || 'none over 0.1'})`;
      },
    };
  } catch {
    return null;
  }
}

/** A thread's scheduling policy (its sched file, where the kernel has one): 'idle' for SCHED_IDLE. */
function policyOf(tid: string): string {
  try {
    return /^policy\s*:\s*5$/m.test(readFileSync(`/proc/self/task/${tid}/sched`, 'utf8')) ? 'idle' : 'other';
  } catch {
    return 'unknown';
  }
}

/**
 * The event loop's thread's time waiting for a core so far, ms (Linux: schedstat's second field,
 * the run queue's wait): the CPU sharing the searches met, whoever took the core.
 */
function loopRunQueueMs(): number | null {
  try {
    return Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ')[1]) / 1e6;
  } catch {
    return null;
  }
}

/** The process's threads now (Linux: /proc/self/task); 0 elsewhere. */
function threadCount(): number {
  try {
    return readdirSync('/proc/self/task').length;
  } catch {
    return 0;
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
  const { values } = parseArgs({ options: { lots: { type: 'string', default: '200000' }, rounds: { type: 'string', default: '2' }, seconds: { type: 'string', default: '10' }, batch: { type: 'string', default: '250' }, rate: { type: 'string' }, isolate: { type: 'boolean' }, 'spin-threads': { type: 'string', default: '1' }, help: { type: 'boolean' } } });
  if (values.help) {
    process.stdout.write(USAGE);
    return;
  }
  const count = Number(values.lots);
  const rounds = Number(values.rounds);
  const idleSeconds = Number(values.seconds);
  feedBatch = Number(values.batch);
  const rates = values.rate === undefined ? [] : values.rate.split(',').map(Number);
  if (rates.some((rate) => !(rate > 0))) throw new Error(`--rate takes searches a second, e.g. 200,1000: ${values.rate}`);
  const isolate = values.isolate === true;
  const spinThreads = Number(values['spin-threads']);
  // The pull's threads' priority, which the spinning threads take too.
  const pullPriority = loadConfig({ NODE_ENV: 'test', PUBLIC_BASE_URL: 'https://bench.invalid', ...priorityEnv() }).feeds.threadPriority;
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
  let otherDb: { db: Db; services: Container; close: () => Promise<void> } | null = null;
  let held = '';
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
    // The isolating pulls' database (--isolate): the same file pulled once into a database of its
    // own before any search, so that each pull of it during the searches upserts the same 200,000
    // unchanged lots as the pull on the searches' database, with no write lock in common.
    if (isolate) {
      otherDb = await fresh(dir, 'other', services.requestsInFlight);
      await otherDb.services.feeds.add({ name: 'bench', url, format: 'copart-csv' });
      log('isolating database: first pull');
      const first = await otherDb.services.feeds.runNow('bench', false);
      if (first.kind !== 'done' || first.result.status !== 'ok') throw new Error(`the isolating database's pull failed: ${JSON.stringify(first)}`);
    }
    const customer = await createUnboundedCustomer(createRepositories(db));
    const app = await buildApp({ services, logger: false });
    await app.ready();
    let next = 0;
    // `began`: when the search was due (a fixed rate counts from its schedule, so queueing counts).
    const searchOnce = async (began = performance.now()) => {
      const vin = vins[(next++ * 7_919) % vins.length]!;
      const answer = await app.inject({ method: 'GET', url: `/api/v1/search?vin=${vin}`, headers: { authorization: customer.token } });
      if (answer.statusCode !== 200) throw new Error(`search answered ${answer.statusCode}: ${answer.body}`);
      return performance.now() - began;
    };
    // Back to back (rate null, a closed loop) or started every 1/rate s whatever the ones before
    // did (an open loop); how long the event loop was held meanwhile, apart from the latencies.
    const searchUntil = async (rate: number | null, done: () => boolean, split?: () => number) => {
      const samples: number[] = [];
      // When each search began, to part a pull's download from its import (split: when it began).
      const starts: number[] = [];
      const loop = monitorEventLoopDelay({ resolution: 1 });
      const cpuBefore = cpuSeconds();
      const queuedBefore = loopRunQueueMs();
      const began = performance.now();
      loop.enable();
      if (rate === null)
        while (!done()) {
          starts.push(performance.now());
          samples.push(await searchOnce());
        }
      else {
        const intervalMs = 1000 / rate;
        await new Promise<void>((resolve, reject) => {
          let sent = 0;
          let inFlight = 0;
          let stopped = false;
          const fire = (due: number) => {
            inFlight++;
            starts.push(due);
            const at = starts.length - 1;
            searchOnce(due).then((ms) => {
              samples[at] = ms;
              if (--inFlight === 0 && stopped) resolve();
            }, reject);
          };
          // Timers fire at best every millisecond or so: each tick starts every search already due.
          const tick = () => {
            if (done()) {
              stopped = true;
              if (inFlight === 0) resolve();
              return;
            }
            const due = Math.floor((performance.now() - began) / intervalMs) + 1;
            while (sent < due) fire(began + sent++ * intervalMs);
            setTimeout(tick, Math.max(0, began + sent * intervalMs - performance.now()));
          };
          tick();
        });
      }
      loop.disable();
      const seconds = (performance.now() - began) / 1000;
      const cpuAfter = cpuSeconds();
      const queuedAfter = loopRunQueueMs();
      const perSearch = (ms: number) => `${((1000 * ms) / Math.max(1, samples.length)).toFixed(0)} µs a search`;
      const cpu =
        cpuBefore && cpuAfter && queuedBefore !== null && queuedAfter !== null
          ? `process ${((cpuAfter.process - cpuBefore.process) / seconds).toFixed(2)} cores, event loop ${((cpuAfter.loop - cpuBefore.loop) / seconds).toFixed(2)} (${perSearch(1000 * (cpuAfter.loop - cpuBefore.loop))}; waiting for a core ${perSearch(queuedAfter - queuedBefore)})`
          : 'no /proc';
      const splitAt = split?.() ?? Infinity;
      const before = samples.filter((_, i) => starts[i]! < splitAt);
      const parts = split ? { download: summariseLatencies(before), import: summariseLatencies(samples.filter((_, i) => starts[i]! >= splitAt)), downloadSeconds: (splitAt - began) / 1000 } : null;
      return { ...summariseLatencies(samples), seconds, cpu, parts, loopP99: loop.percentile(99) / 1e6, loopMax: loop.max / 1e6 };
    };
    const forSeconds = (seconds: number) => {
      const end = performance.now() + seconds * 1000;
      return () => performance.now() >= end;
    };
    type Phase = Awaited<ReturnType<typeof searchUntil>> & { waits: string; what: string; gaveWay?: string };
    const idlePhase = async (rate: number | null): Promise<Phase> => {
      const waits = gateWaits(db);
      const result = await searchUntil(rate, forSeconds(idleSeconds));
      return { ...result, waits: waits(), what: 'idle' };
    };
    // A pull of the feed (a new ETag: every lot read and upserted again, unchanged) while searching.
    const pullPhase = async (rate: number | null, target: 'same' | 'other'): Promise<Phase & { pullSeconds: number }> => {
      const on = target === 'same' ? searchDb! : otherDb!;
      etag++;
      let pulling = true;
      // The other database's gate sees no search: a priority entry every 50 ms makes its pull write
      // in slices, as the pull on the searches' database does, so that both do the same CPU work.
      const otherGate = target === 'other' ? new WriteGate(on.db.dialect.bulkWriter()!.gate) : null;
      const ticker = otherGate ? setInterval(() => void otherGate.enter().then(() => otherGate.leave()), 50) : null;
      const started = performance.now();
      // The import begins when its reading and storing threads do: till then the pull downloads
      // and checks the file on the event loop (the bench's server sends it from the same loop).
      const threadsBefore = threadCount();
      let importAt = Infinity;
      const watch = setInterval(() => {
        if (importAt === Infinity && threadCount() >= threadsBefore + 2) importAt = performance.now();
      }, 20);
      const pull = on.services.feeds.runNow('bench', false).finally(() => (pulling = false));
      const waits = gateWaits(db);
      const gaveBefore = services.requestsInFlight.gaveWay();
      const result = await searchUntil(rate, () => !pulling, () => importAt);
      clearInterval(watch);
      const waited = waits();
      const run = await pull;
      if (ticker) clearInterval(ticker);
      const pullSeconds = (performance.now() - started) / 1000;
      if (run.kind !== 'done' || run.result.status !== 'ok') throw new Error(`the pull failed: ${JSON.stringify(run)}`);
      const gave = services.requestsInFlight.gaveWay();
      const pausedSeconds = (gave.pausedMs - gaveBefore.pausedMs) / 1000;
      // Both threads pause, each on its own: their paused time is over two threads' time.
      const gaveWay = `${gave.pauses - gaveBefore.pauses} pauses, ${pausedSeconds.toFixed(1)} s paused in all (${((100 * pausedSeconds) / (2 * pullSeconds)).toFixed(0)}% of the two threads' ${pullSeconds.toFixed(1)} s), ${gave.floorHits - gaveBefore.floorHits} cut short by the floor (FEEDS_YIELD_MS ${on.services.config.feeds.yieldMs})`;
      return { ...result, waits: waited, pullSeconds, gaveWay, what: target === 'same' ? `during a pull (${pullSeconds.toFixed(1)} s)` : `during a pull into another database (${pullSeconds.toFixed(1)} s)` };
    };
    // Threads at the pull's niceness spinning for `seconds`: the pull's CPU demand without its lock.
    const spinPhase = async (rate: number | null, seconds: number): Promise<Phase> => {
      const stop = new Int32Array(new SharedArrayBuffer(4));
      const spinners = Array.from({ length: spinThreads }, () => new Worker(spinCode(pullPriority), { eval: true, workerData: { stop: stop.buffer } }));
      await Promise.all(spinners.map((worker) => new Promise((ready) => worker.once('message', ready))));
      const result = await searchUntil(rate, forSeconds(seconds));
      Atomics.store(stop, 0, 1);
      await Promise.all(spinners.map((worker) => worker.terminate()));
      return { ...result, waits: 'no writer', what: `beside ${spinThreads} spinning thread(s) at ${describePriority(pullPriority)} (${seconds.toFixed(1)} s)` };
    };

    for (let i = 0; i < 200; i++) await searchOnce();
    const line = (phase: Phase) =>
      `search, ${phase.what}: ${phase.count} searches, p50 ${phase.p50.toFixed(2)} ms, p99 ${phase.p99.toFixed(2)} ms, max ${phase.max.toFixed(1)} ms${
        phase.parts ? ` (the download and checks, ${phase.parts.downloadSeconds.toFixed(1)} s: ${phase.parts.download.count}, p99 ${phase.parts.download.p99.toFixed(2)} ms; the import: ${phase.parts.import.count}, p50 ${phase.parts.import.p50.toFixed(2)}, p99 ${phase.parts.import.p99.toFixed(2)} ms)` : ''
      }; event loop delay p99 ${phase.loopP99.toFixed(1)} ms; CPU ${phase.cpu}; search commits' wait at the write gate: ${phase.waits}${phase.gaveWay ? `; the pull gave way: ${phase.gaveWay}` : ''}`;
    const ratio = (phase: Phase, idle: number) => `${(phase.p99 / idle).toFixed(2)}`;
    const searchLines: string[] = [];
    for (const rate of [null, ...rates]) {
      const label = rate === null ? 'closed loop (back to back)' : `${int.format(rate)} searches a second (open loop, from the schedule)`;
      log(`searching: ${label}`);
      const idle = await idlePhase(rate);
      const during = await pullPhase(rate, 'same');
      const other = isolate ? await pullPhase(rate, 'other') : null;
      const spin = isolate ? await spinPhase(rate, during.pullSeconds) : null;
      // Idle again once the pulls are over: on a shared machine the two idle figures show the noise.
      const after = await idlePhase(rate);
      after.what = 'idle after';
      if (rate === null) held = await batchLock(services);
      const lowest = Math.min(idle.p99, after.p99);
      const phases = [idle, during, other, spin, after].filter((phase) => phase !== null);
      phases.forEach((phase) => log(line(phase)));
      searchLines.push(
        `-- ${label}`,
        ...phases.map(line),
        `p99 / idle (the lower idle): during a pull ${ratio(during, lowest)} (the pull ${during.pullSeconds.toFixed(1)} s)${other ? `, a pull into another database ${ratio(other, lowest)}` : ''}${spin ? `, spinning threads ${ratio(spin, lowest)}` : ''} (target <= 1.2)`,
      );
    }
    await app.close();

    const best = (rates: number[]) => Math.max(...rates);
    const lines = [
      `machine: ${os.cpus().length} x ${os.cpus()[0]?.model ?? 'cpu'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, node ${process.version}; load average at the end ${os.loadavg().map((load) => load.toFixed(2)).join(', ')}`,
      `file: ${int.format(count)} lots, Copart CSV, ${int.format(bytes / 2 ** 20)} MiB, served from 127.0.0.1`,
      `vinhistory import (worker, batch ${BULK_LOAD_BATCH_SIZE}): ${importRates.map((r) => int.format(r)).join(', ')} lots/s`,
      `feed pull (download, checks, import; batch ${feedBatch}): ${feedRates.map((r) => int.format(r)).join(', ')} lots/s`,
      `the pull's threads: ${describePriority(pullPriority)}; FEEDS_SLICE_MS ${process.env.FEEDS_SLICE_MS ?? 'default'}; FEEDS_YIELD_MS ${services.config.feeds.yieldMs} (0: the pull never gives way to the searches in flight)`,
      `feed / import (best of each): ${(best(feedRates) / best(importRates)).toFixed(2)} (target >= 0.8)`,
      `event loop thread's CPU during each pull (download, checks, import; the whole process's beside it): ${loopShares.join('; ') || 'not measured (no /proc)'}`,
      `threads' CPU during each pull with no search: ${threadShares.join('; ') || 'not measured (no /proc)'}`,
      ...searchLines,
      `write lock per transaction of the pulls on the searches' database: ${held}`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await searchDb?.close();
    await otherDb?.close();
    await new Promise((done) => server.close(done));
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
