/**
 * The batch benchmark (`npm run bench:batch -- [options]`), in one process on a SQLite file.
 *
 * Timed (the default), `--reps` repetitions, each scenario's two sides run in alternating order
 * (A B, B A, ...) so that a machine growing busier or quieter favours neither:
 * 1. throughput: `--items` searches sent directly through the search service, `--concurrency` at a
 *    time (the runner's own number in flight), against a batch of the same VINs, timed from its
 *    POST to its last item (the batch's status read every 5 ms); both on a plan whose
 *    limits never bind, so the ratio is the runner's own cost (issue 26's bar: 0.8 or more).
 *    Direct searches each with an Idempotency-Key are timed too (what a key costs a search; a batch
 *    item's search carried one until its commit checked the item's own row instead).
 *    The process's CPU time per item (all its threads) is shown beside the rates: a busy machine
 *    stretches wall time far more than it does CPU time.
 * 2. live latency: GET /api/v1/search through inject() at `--live-rate` a second for
 *    `--live-seconds`, idle, and beside batches of a plan of `--paced-rate` a second (whose batches
 *    take half of it, one after another for the whole time): the bar is the p99 beside them within
 *    1.2 of idle. Beside unpaced batches (of the unbounded plan, one after another) is shown too.
 *    The p99s themselves are summarised over the repetitions (median and range) beside their ratios.
 *
 * `--instructions`: the same process under valgrind (callgrind), counting the instructions of
 * `--items` direct searches, as many with a key each, and a batch of as many (its POST, and the
 * runner to its end, without polling), after two warm-up rounds; each counted twice, in mirrored
 * order, and averaged (the JIT's background compilations are counted too, and vary). Instruction counts do not depend
 * on the load of the machine; the per-item figures say what a batch item costs beyond its search.
 *
 * See docs/benchmarks.md, "Batches", for the method and the figures.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pino from 'pino';
import { buildApp, type App } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { createContainer } from '../src/container.ts';
import type { SearchPrincipal } from '../src/domain/principal.ts';
import { MemoryRateLimiter } from '../src/limits/rate/memory-rate-limiter.ts';
import { migrateToLatest, openDatabase } from '../src/storage/database.ts';
import { createRepositories } from '../src/storage/repositories/index.ts';
import { createUnboundedCustomer, loadSyntheticLots } from './support/bench-data.ts';
import { summariseLatencies } from './support/latencies.ts';

const USAGE = `usage: npm run bench:batch -- [options]

  --items N          items of a batch, and direct searches to compare (default 1000)
  --lots N           synthetic lots (default 20000)
  --concurrency N    direct searches in flight (default 16, the runner's own)
  --reps N           repetitions of each scenario, in alternating order (default 3)
  --live-rate N      live searches a second (default 50)
  --live-seconds N   seconds of live searches per measurement (default 20: at 50/s, 10 samples above the p99)
  --paced-rate N     the paced plan's rate a second, its batch at half of it (default 200)
  --instructions     count instructions under callgrind instead of timing (no latency part)
`;

const { values } = parseArgs({
  options: {
    items: { type: 'string', default: '1000' },
    lots: { type: 'string', default: '20000' },
    concurrency: { type: 'string', default: '16' },
    reps: { type: 'string', default: '3' },
    'live-rate': { type: 'string', default: '50' },
    'live-seconds': { type: 'string', default: '20' },
    'paced-rate': { type: 'string', default: '200' },
    instructions: { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
});
if (values.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}
const ITEMS = Number(values.items);
const CONCURRENCY = Number(values.concurrency);
const REPS = Number(values.reps);
const LIVE_RATE = Number(values['live-rate']);
const LIVE_SECONDS = Number(values['live-seconds']);
const PACED_RATE = Number(values['paced-rate']);
/** Set in the child that runs under callgrind. */
const UNDER_CALLGRIND = process.env.VINHISTORY_BENCH_UNDER_CALLGRIND === '1';
const log = (message: string) => process.stderr.write(`${message}\n`);
const say = (message: string) => process.stdout.write(`${message}\n`);

function run(command: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'inherit'] });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${command} ${args.join(' ')} exited with ${code}`))));
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;
const spread = (xs: number[], digits = 2) => `median ${median(xs).toFixed(digits)}, range ${Math.min(...xs).toFixed(digits)}-${Math.max(...xs).toFixed(digits)}`;

async function main(): Promise<void> {
  if (values.instructions && !UNDER_CALLGRIND) return countUnderCallgrind();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'vinhistory-bench-batch-'));
  const config = loadConfig({ NODE_ENV: 'test', PUBLIC_BASE_URL: 'http://127.0.0.1', DATA_DIR: dir, LOG_LEVEL: 'silent' });
  const db = await openDatabase(config.database);
  try {
    await migrateToLatest(db);
    const repos = createRepositories(db);
    const { vins } = await loadSyntheticLots(repos, { count: Number(values.lots), seed: 26 });
    const direct = await createUnboundedCustomer(repos, '-direct');
    const batcher = await createUnboundedCustomer(repos, '-batch');
    // The latency scenario's account: a plan whose rate paces its batch (half of it), live searches beside.
    const pacedPlan = await repos.plans.create({ code: 'bench-paced', name: 'Benchmark (paced)', monthlyQuota: 1_000_000_000, ratePerSecond: PACED_RATE, monthlyPriceCents: 0 });
    const pacedAccount = await repos.accounts.create('bench-paced@vinhistory.invalid');
    await repos.subscriptions.create({ accountId: pacedAccount.id, planCode: pacedPlan.code, billing: 'monthly', startedAt: new Date(Date.now() - 60_000) });
    const paced = { token: (await repos.tokens.create(pacedAccount.id, 'bench')).token };
    const services = createContainer({ config, db, log: pino({ level: 'silent' }), rateLimiter: new MemoryRateLimiter(), overrides: { batchRunner: { pollMs: 20 } } });
    const app = await buildApp({ services, logger: false });
    await app.ready();
    const pick = (i: number) => vins[i % vins.length]!;
    const principal = (await repos.tokens.reload(direct.tokenId)) as SearchPrincipal;

    let keyed = 0;
    /** ITEMS searches sent directly, CONCURRENCY at a time (with a new Idempotency-Key each when `withKey`); answers seconds. */
    const sendDirect = async (withKey: boolean): Promise<number> => {
      let next = 0;
      const started = performance.now();
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          for (let i = next++; i < ITEMS; i = next++) await services.search.search(principal, pick(i), withKey ? `bench-${keyed++}` : undefined);
        }),
      );
      return (performance.now() - started) / 1000;
    };
    /** Posts a batch of `items` and answers its id. */
    const post = async (token: string, items = ITEMS): Promise<string> => {
      const created = await app.inject({ method: 'POST', url: '/api/v1/batches', headers: { authorization: token }, payload: { items: Array.from({ length: items }, (_, i) => ({ vin: pick(i) })) } });
      if (created.statusCode !== 202) throw new Error(`batch refused: ${created.statusCode} ${created.body}`);
      return created.json<{ id: string }>().id;
    };

    if (UNDER_CALLGRIND) return await countPhases(app, services.batchRunner, sendDirect, () => post(batcher.token));

    /** A batch from its POST to its last item, its status read every 5 ms; answers seconds. */
    const runBatch = async (token: string, items = ITEMS): Promise<number> => {
      const started = performance.now();
      const id = await post(token, items);
      services.batchRunner.start();
      // The end is watched by the batch's row alone: a client's GET (which counts the items too)
      // every few milliseconds would cost more the longer a busy machine stretches the batch.
      for (;;) {
        const row = await db.kysely.selectFrom('batches').select('status').where('id', '=', id).executeTakeFirstOrThrow();
        if (row.status === 'done') break;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      return (performance.now() - started) / 1000;
    };

    say(`items ${ITEMS}, lots ${values.lots}, concurrency ${CONCURRENCY}, SQLite file, one process (node ${process.version}, ${os.cpus().length} CPUs, load average ${os.loadavg()[0]!.toFixed(1)} at the start)`);
    // Warm-up: the JIT, the statements, the caches.
    await sendDirect(false);
    await runBatch(batcher.token);

    // 1. Throughput, A/B alternating.
    const ratios: number[] = [];
    const keyedRatios: number[] = [];
    const cpuRatios: number[] = [];
    for (let rep = 0; rep < REPS; rep++) {
      const t: { direct?: number; keyed?: number; batch?: number } = {};
      const cpu: { direct?: number; keyed?: number; batch?: number } = {};
      const order = rep % 2 === 0 ? (['direct', 'keyed', 'batch'] as const) : (['batch', 'keyed', 'direct'] as const);
      for (const side of order) {
        const before = process.cpuUsage();
        t[side] = side === 'batch' ? await runBatch(batcher.token) : await sendDirect(side === 'keyed');
        const used = process.cpuUsage(before);
        cpu[side] = (used.user + used.system) / ITEMS;
      }
      cpuRatios.push(cpu.batch! / cpu.direct!);
      const rate = (s: number) => ITEMS / s;
      ratios.push(rate(t.batch!) / rate(t.direct!));
      keyedRatios.push(rate(t.batch!) / rate(t.keyed!));
      say(
        `throughput rep ${rep + 1} (${order.join(', ')}): direct ${rate(t.direct!).toFixed(0)}/s, direct with a key each ${rate(t.keyed!).toFixed(0)}/s, batch ${rate(t.batch!).toFixed(0)}/s: batch/direct ${ratios.at(-1)!.toFixed(2)}; CPU time per item (all threads) direct ${cpu.direct!.toFixed(0)} µs, keyed ${cpu.keyed!.toFixed(0)} µs, batch ${cpu.batch!.toFixed(0)} µs`,
      );
    }

    // 2. Live latency idle and beside a paced batch, alternating; beside an unpaced one, for comparison.
    const live = async (token: string): Promise<number[]> => {
      const latencies: number[] = [];
      const start = performance.now();
      const sends: Promise<void>[] = [];
      for (let i = 0; i < LIVE_RATE * LIVE_SECONDS; i++) {
        const due = start + (i * 1000) / LIVE_RATE;
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - performance.now())));
        sends.push(
          (async () => {
            const sent = performance.now();
            const res = await app.inject({ url: `/api/v1/search?vin=${pick(i * 7)}`, headers: { authorization: token } });
            if (res.statusCode !== 200 && res.statusCode !== 404) throw new Error(`live search answered ${res.statusCode}: ${res.body}`);
            latencies.push(performance.now() - sent);
          })(),
        );
      }
      await Promise.all(sends);
      return latencies;
    };
    // Batches one after another for as long as the live searches run: a batch holds at most 1,000
    // items, which a paced one (half of PACED_RATE) runs in less than a long live run.
    const beside = async (token: string, items: number) => {
      let done = false;
      const batches = (async () => {
        while (!done) await runBatch(token, items);
      })();
      const latencies = await live(token);
      done = true;
      await batches;
      return latencies;
    };
    const pacedItems = Math.min(1000, Math.floor(PACED_RATE / 2) * (LIVE_SECONDS + 1));
    const besidePaced = () => beside(paced.token, pacedItems);
    const besideUnpaced = () => beside(batcher.token, ITEMS);
    const pacedRatios: number[] = [];
    const unpacedRatios: number[] = [];
    const idleP99s: number[] = [];
    const pacedP99s: number[] = [];
    for (let rep = 0; rep < REPS; rep++) {
      const p: { idle?: number[]; paced?: number[]; unpaced?: number[] } = {};
      const order = rep % 2 === 0 ? (['idle', 'paced', 'unpaced'] as const) : (['unpaced', 'paced', 'idle'] as const);
      for (const side of order) p[side] = side === 'idle' ? await live(paced.token) : side === 'paced' ? await besidePaced() : await besideUnpaced();
      const idle = summariseLatencies(p.idle!);
      const pacedL = summariseLatencies(p.paced!);
      const unpacedL = summariseLatencies(p.unpaced!);
      idleP99s.push(idle.p99);
      pacedP99s.push(pacedL.p99);
      pacedRatios.push(pacedL.p99 / idle.p99);
      unpacedRatios.push(unpacedL.p99 / idle.p99);
      say(
        `live rep ${rep + 1} (${order.join(', ')}): p50/p99 idle ${idle.p50.toFixed(2)}/${idle.p99.toFixed(2)} ms, beside the ${PACED_RATE}/s plan's batch ${pacedL.p50.toFixed(2)}/${pacedL.p99.toFixed(2)} ms (${pacedRatios.at(-1)!.toFixed(2)} of idle), beside unpaced batches ${unpacedL.p50.toFixed(2)}/${unpacedL.p99.toFixed(2)} ms (${unpacedRatios.at(-1)!.toFixed(2)})`,
      );
    }
    await services.batchRunner.stop();

    say(`batch / direct throughput:            ${spread(ratios)} (bar: at least 0.8)`);
    say(`batch / direct with a key each:       ${spread(keyedRatios)}`);
    say(`CPU time per item, batch / direct:    ${spread(cpuRatios)} (less sensitive to the machine's load than the rates)`);
    say(`live p99 idle, ms:                    ${spread(idleP99s)}`);
    say(`live p99 beside paced batches, ms:    ${spread(pacedP99s)}`);
    say(`live p99 beside a paced batch / idle: ${spread(pacedRatios)} (bar: at most 1.2; ${LIVE_RATE}/s for ${LIVE_SECONDS} s, ${LIVE_RATE * LIVE_SECONDS} samples each)`);
    say(`live p99 beside unpaced batches / idle: ${spread(unpacedRatios)} (no bar)`);
    await app.close();
  } finally {
    await db.close().catch(() => {});
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Under callgrind (instrumentation off until the warm-up is done): each phase between a zeroing of
 * the counters and a dump, so the dump files `.1`, `.2`, `.3` hold one phase each.
 */
async function countPhases(
  app: App,
  runner: { runDue(): Promise<number> },
  sendDirect: (withKey: boolean) => Promise<number>,
  postBatch: () => Promise<string>,
): Promise<void> {
  const pid = String(process.pid);
  const batch = async () => {
    await postBatch();
    await runner.runDue();
  };
  for (let round = 0; round < 2; round++) {
    await sendDirect(false);
    await sendDirect(true);
    await batch();
  }
  await run('callgrind_control', ['-i', 'on', pid]);
  // Each kind twice, in mirrored order: dumps 1 and 6 direct, 2 and 5 keyed, 3 and 4 batch.
  for (const phase of [() => sendDirect(false), () => sendDirect(true), batch, batch, () => sendDirect(true), () => sendDirect(false)]) {
    await run('callgrind_control', ['-z', pid]);
    await phase();
    await run('callgrind_control', ['-d', pid]);
  }
  await app.close();
}

async function countUnderCallgrind(): Promise<void> {
  const outDir = await mkdtemp(path.join(os.tmpdir(), 'vinhistory-callgrind-batch-'));
  const root = fileURLToPath(new URL('..', import.meta.url));
  const args = process.argv.slice(2);
  try {
    await new Promise<void>((resolve, reject) => {
      const child = spawn(
        'valgrind',
        ['--tool=callgrind', '--instr-atstart=no', '--trace-children=no', `--callgrind-out-file=${outDir}/callgrind.out.%p`, process.execPath, 'bin/run-ts.js', 'bench/batch.ts', ...args],
        { cwd: root, stdio: ['ignore', 'inherit', 'pipe'], env: { ...process.env, VINHISTORY_BENCH_UNDER_CALLGRIND: '1' } },
      );
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.on('error', reject);
      child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`valgrind exited with ${code}: ${stderr.slice(-2000)}`))));
    });
    const totals = new Map<number, number>();
    for (const name of await readdir(outDir)) {
      const phase = /\.(\d+)$/.exec(name);
      if (!phase || !name.startsWith('callgrind.out')) continue;
      const text = await readFile(path.join(outDir, name), 'utf8');
      let total = 0;
      for (const match of text.matchAll(/^summary:\s+(\d+)/gm)) total += Number(match[1]);
      totals.set(Number(phase[1]), (totals.get(Number(phase[1])) ?? 0) + total);
    }
    const per = (phase: number) => (totals.get(phase) ?? Number.NaN) / ITEMS;
    const [direct, keyed, batch] = [(per(1) + per(6)) / 2, (per(2) + per(5)) / 2, (per(3) + per(4)) / 2];
    say(`  (each counted twice: direct ${(per(1) / 1000).toFixed(0)} k and ${(per(6) / 1000).toFixed(0)} k, keyed ${(per(2) / 1000).toFixed(0)} k and ${(per(5) / 1000).toFixed(0)} k, batch ${(per(3) / 1000).toFixed(0)} k and ${(per(4) / 1000).toFixed(0)} k)`);
    say(`instructions per item (callgrind, ${ITEMS} items, all threads; node ${process.version}):`);
    say(`  direct search:                  ${(direct / 1000).toFixed(0)} k`);
    say(`  direct search with a key:       ${(keyed / 1000).toFixed(0)} k`);
    say(`  batch item (POST and runner):   ${(batch / 1000).toFixed(0)} k  (${(batch / direct).toFixed(2)} of direct, ${(batch / keyed).toFixed(2)} of keyed; as a rate: ${(direct / batch).toFixed(2)} of direct's)`);
    // The JIT's and the collector's work only adds: the lower of two counts is the steadier figure.
    const low = (a: number, b: number) => Math.min(per(a), per(b));
    say(`  lower of the two counts: direct ${(low(1, 6) / 1000).toFixed(0)} k, keyed ${(low(2, 5) / 1000).toFixed(0)} k, batch ${(low(3, 4) / 1000).toFixed(0)} k (batch ${(low(3, 4) / low(1, 6)).toFixed(2)} of direct)`);
  } finally {
    await rm(outDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  log(error instanceof Error ? (error.stack ?? error.message) : String(error));
  process.exit(1);
});
