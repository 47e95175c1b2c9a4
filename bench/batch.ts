/**
 * The batch benchmark (`npm run bench:batch -- [options]`), in one process on a SQLite file:
 * 1. throughput: N searches sent directly through the search service, `--concurrency` at a time
 *    (the batch runner's own number in flight), against a batch of the same N VINs run by the
 *    batch runner, from the POST to its last item; both on a plan whose limits never bind, so the
 *    figure is the runner's own cost (the contract's bar: the batch at 0.8 of direct or more);
 * 2. live latency: GET /api/v1/search through inject() at `--live-rate` a second for
 *    `--live-seconds`, idle and then while a batch of N runs, p50/p99 of each (the bar: the p99
 *    during the batch within 20% of idle).
 * See docs/benchmarks.md for the method and the figures.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pino from 'pino';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { createContainer } from '../src/container.ts';
import type { SearchPrincipal } from '../src/domain/principal.ts';
import { MemoryRateLimiter } from '../src/limits/rate/memory-rate-limiter.ts';
import { migrateToLatest, openDatabase } from '../src/storage/database.ts';
import { createRepositories } from '../src/storage/repositories/index.ts';
import { createUnboundedCustomer, loadSyntheticLots } from './support/bench-data.ts';
import { summariseLatencies } from './support/latencies.ts';

const { values } = parseArgs({
  options: {
    items: { type: 'string', default: '1000' },
    lots: { type: 'string', default: '20000' },
    concurrency: { type: 'string', default: '16' },
    'live-rate': { type: 'string', default: '50' },
    'live-seconds': { type: 'string', default: '4' },
    'paced-rate': { type: 'string', default: '200' },
  },
});
const ITEMS = Number(values.items);
const CONCURRENCY = Number(values.concurrency);
const LIVE_RATE = Number(values['live-rate']);
const LIVE_SECONDS = Number(values['live-seconds']);
const log = (message: string) => process.stderr.write(`${message}\n`);

async function main(): Promise<void> {
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
    const pacedPlan = await repos.plans.create({ code: 'bench-paced', name: 'Benchmark (paced)', monthlyQuota: 1_000_000_000, ratePerSecond: Number(values['paced-rate']), monthlyPriceCents: 0 });
    const pacedAccount = await repos.accounts.create('bench-paced@vinhistory.invalid');
    await repos.subscriptions.create({ accountId: pacedAccount.id, planCode: pacedPlan.code, billing: 'monthly', startedAt: new Date(Date.now() - 60_000) });
    const paced = { token: (await repos.tokens.create(pacedAccount.id, 'bench')).token };
    const rateLimiter = new MemoryRateLimiter();
    const services = createContainer({ config, db, log: pino({ level: 'silent' }), rateLimiter, overrides: { batchRunner: { pollMs: 20 } } });
    const app = await buildApp({ services, logger: false });
    await app.ready();
    const pick = (i: number) => vins[i % vins.length]!;

    // 1. Direct searches, CONCURRENCY at a time.
    const principal = (await repos.tokens.reload(direct.tokenId)) as SearchPrincipal;
    let next = 0;
    const startedDirect = performance.now();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        for (let i = next++; i < ITEMS; i = next++) await services.search.search(principal, pick(i), undefined);
      }),
    );
    const directPerSecond = ITEMS / ((performance.now() - startedDirect) / 1000);

    // 2. The same searches as a batch.
    const runBatch = async (token = batcher.token): Promise<number> => {
      const started = performance.now();
      const created = await app.inject({ method: 'POST', url: '/api/v1/batches', headers: { authorization: token }, payload: { items: Array.from({ length: ITEMS }, (_, i) => ({ vin: pick(i) })) } });
      if (created.statusCode !== 202) throw new Error(`batch refused: ${created.statusCode} ${created.body}`);
      const { id } = created.json<{ id: string }>();
      services.batchRunner.start();
      for (;;) {
        const batch = (await app.inject({ url: `/api/v1/batches/${id}`, headers: { authorization: token } })).json<{ status: string }>();
        if (batch.status === 'done') break;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      return ITEMS / ((performance.now() - started) / 1000);
    };
    const batchPerSecond = await runBatch();
    await services.batchRunner.stop();

    // 3. Live searches idle, then beside a batch.
    const live = async (token = batcher.token): Promise<number[]> => {
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
            if (res.statusCode !== 200 && res.statusCode !== 404) throw new Error(`live search answered ${res.statusCode}`);
            latencies.push(performance.now() - sent);
          })(),
        );
      }
      await Promise.all(sends);
      return latencies;
    };
    const idle = summariseLatencies(await live());
    const beside = await Promise.all([live(), runBatch()]);
    const during = summariseLatencies(beside[0]);
    await services.batchRunner.stop();
    // The same beside a batch of a plan of --paced-rate a second (the batch at half of it), live searches of that account.
    const pacedIdle = summariseLatencies(await live(paced.token));
    const pacedLive = live(paced.token);
    const pacedBatch = runBatch(paced.token);
    const pacedDuring = summariseLatencies(await pacedLive);
    await services.batchRunner.stop();
    void pacedBatch.catch(() => {});

    const lines = [
      `items ${ITEMS}, lots ${values.lots}, concurrency ${CONCURRENCY}, SQLite file, one process (node ${process.version}, ${os.cpus().length} CPUs)`,
      `direct searches:     ${directPerSecond.toFixed(0)} /s`,
      `batch:               ${batchPerSecond.toFixed(0)} /s  (${(batchPerSecond / directPerSecond).toFixed(2)} of direct; bar 0.8)`,
      `live p50/p99 idle:   ${idle.p50.toFixed(2)} / ${idle.p99.toFixed(2)} ms (${LIVE_RATE}/s for ${LIVE_SECONDS} s)`,
      `live p50/p99 beside an unpaced batch: ${during.p50.toFixed(2)} / ${during.p99.toFixed(2)} ms (${(during.p99 / idle.p99).toFixed(2)} of idle); the batch beside it ran at ${beside[1].toFixed(0)} /s`,
      `paced plan ${values['paced-rate']}/s: live p50/p99 idle ${pacedIdle.p50.toFixed(2)} / ${pacedIdle.p99.toFixed(2)} ms, beside its batch ${pacedDuring.p50.toFixed(2)} / ${pacedDuring.p99.toFixed(2)} ms (${(pacedDuring.p99 / pacedIdle.p99).toFixed(2)} of idle; bar 1.2)`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
    await app.close();
  } finally {
    await db.close().catch(() => {});
    await rm(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  log(error instanceof Error ? (error.stack ?? error.message) : String(error));
  process.exit(1);
});
