/**
 * The webhooks benchmark (`npm run bench:webhooks -- [options]`), on SQLite in a temporary folder:
 *
 * 1. the import of N synthetic lots (batches of 10,000, as `vinhistory import --batch-size 10000`)
 *    into an empty database, without watches and then with 10,000 watches (1 % of them on VINs
 *    of the import, so that events are made too): the cost of the outbox hook;
 * 2. delivery throughput: events queued, sent by one worker to a local receiver (events/s);
 * 3. latency from an import's commit to the receiver getting its event, with the worker running
 *    as in `vinhistory serve` (p50, p99).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pino from 'pino';
import { loadConfig } from '../src/config.ts';
import { createContainer, type Container } from '../src/container.ts';
import { generateLots } from '../src/dev/seed/synthetic-lots.ts';
import type { Lot } from '../src/domain/lot.ts';
import { MemoryRateLimiter } from '../src/limits/rate/memory-rate-limiter.ts';
import { migrateToLatest, openDatabase, type Db } from '../src/storage/database.ts';
import { createRepositories } from '../src/storage/repositories/index.ts';
import { summariseLatencies } from './support/latencies.ts';

const { values } = parseArgs({
  options: {
    lots: { type: 'string', default: '1000000' },
    watches: { type: 'string', default: '10000' },
    events: { type: 'string', default: '2000' },
    samples: { type: 'string', default: '200' },
  },
});
const LOTS = Number(values.lots);
const WATCHES = Number(values.watches);
const EVENTS = Number(values.events);
const SAMPLES = Number(values.samples);
const BATCH = 10_000;
const log = (message: string) => process.stderr.write(`${message}\n`);
const fmt = new Intl.NumberFormat('en-US', { maximumFractionDigits: 1 });

async function openBench(dir: string, name: string): Promise<{ db: Db; services: Container; close: () => Promise<void> }> {
  const config = loadConfig({ NODE_ENV: 'test', DATA_DIR: dir, OUTBOUND_ALLOW_PRIVATE: 'true', LOG_LEVEL: 'silent' });
  const db = await openDatabase({ kind: 'sqlite', file: path.join(dir, `${name}.sqlite`) });
  await migrateToLatest(db);
  const limiter = new MemoryRateLimiter();
  const services = createContainer({ config, db, log: pino({ level: 'silent' }), rateLimiter: limiter, overrides: { webhookWorker: { concurrency: 32, pollMs: 50 } } });
  return { db, services, close: async () => { await services.close(); await limiter.close(); await db.close(); } };
}

/** An account on the Standard plan raised to `watches`, with an endpoint; returns its id. */
async function subscriber(db: Db, services: Container, url: string, watches: number): Promise<string> {
  const code = `bench-${watches}`;
  await services.plans.create({ code, name: 'Bench', monthlyQuota: 1, ratePerSecond: 1, monthlyPriceCents: 0, watchLimit: watches });
  const account = await createRepositories(db).accounts.create(`bench-${Date.now()}@example.com`);
  await db.kysely.insertInto('subscriptions').values({ id: `sub_bench${Date.now()}`, account_id: account.id, plan_code: code, billing: 'monthly', status: 'active', started_at: new Date(Date.now() - 1000).toISOString(), ends_at: null, created_at: new Date().toISOString() }).execute();
  await services.webhooks.setEndpoint(account.id, url);
  return account.id;
}

async function importAll(services: Container, lots: readonly Lot[]): Promise<number> {
  const started = performance.now();
  await services.ingest.importRecords((async function* () { let line = 0; for (const lot of lots) yield { line: ++line, raw: lot }; })(), { bulkLoad: true, batchSize: BATCH });
  return (performance.now() - started) / 1000;
}

async function main() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'vinhistory-bench-webhooks-'));
  let received = 0;
  const arrivals = new Map<string, number>();
  const receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received++;
      arrivals.set(String(req.headers['vinhistory-event-id']), performance.now());
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  try {
    log(`generating ${fmt.format(LOTS)} synthetic lots`);
    const lots = [...generateLots({ count: LOTS, seed: 1, until: new Date('2026-01-01T00:00:00Z') })];
    const vins = [...new Set(lots.map((lot) => lot.vin))];

    // 1. Import without and with watches.
    const plain = await openBench(dir, 'plain');
    const plainSeconds = await importAll(plain.services, lots);
    await plain.close();
    const watched = await openBench(dir, 'watched');
    const accountId = await subscriber(watched.db, watched.services, url, WATCHES);
    const matching = Math.floor(WATCHES / 100);
    for (let i = 0; i < WATCHES; i++) {
      const vin = i < matching ? vins[(i * 97) % vins.length]! : `WBA${String(i).padStart(14, '0')}`.slice(0, 17);
      await watched.db.kysely.insertInto('watches').values({ id: `wch_bench${String(i).padStart(11, '0')}`, account_id: accountId, vin, auction: null, lot_id: null, created_at: new Date().toISOString() }).execute();
    }
    const watchedSeconds = await importAll(watched.services, lots);
    const { n: events } = await watched.db.kysely.selectFrom('webhook_outbox').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    log(`import of ${fmt.format(LOTS)} lots: ${fmt.format(plainSeconds)} s without watches, ${fmt.format(watchedSeconds)} s with ${fmt.format(WATCHES)} watches (${events} events): ${fmt.format((watchedSeconds / plainSeconds - 1) * 100)} % slower`);

    // 2. Throughput: queue EVENTS pings' worth of lot events and drain them.
    await watched.db.kysely.deleteFrom('webhook_attempts').execute();
    await watched.db.kysely.deleteFrom('webhook_outbox').execute();
    const payload = JSON.stringify({ type: 'lot.updated', data: { lot: lots[0] } });
    const now = new Date().toISOString();
    const rows = Array.from({ length: EVENTS }, (_, i) => ({ id: `evt_bench${String(i).padStart(11, '0')}`, account_id: accountId, type: 'lot.updated', payload, created_at: now, status: 'pending' as const, attempts: 0, next_attempt_at: now, give_up_at: '2999-01-01T00:00:00.000Z', lease_owner: null, lease_until: null, last_attempt_at: null, finished_at: null }));
    for (let i = 0; i < rows.length; i += 200) await watched.db.kysely.insertInto('webhook_outbox').values(rows.slice(i, i + 200)).execute();
    received = 0;
    const drainStart = performance.now();
    while ((await watched.services.deliveryWorker.runOnce()) > 0);
    const drainSeconds = (performance.now() - drainStart) / 1000;
    log(`delivery: ${fmt.format(received)} events in ${fmt.format(drainSeconds)} s: ${fmt.format(received / drainSeconds)} events/s (concurrency 32, local receiver)`);

    // 3. Commit-to-delivery latency with the worker running (poll 50 ms here; serve polls every 500 ms).
    watched.services.deliveryWorker.start();
    const latencies: number[] = [];
    const target = lots[0]!;
    for (let i = 0; i < SAMPLES; i++) {
      const before = new Set(arrivals.keys());
      await watched.services.ingest.importRecords((async function* () { yield { line: 1, raw: { ...target, odometer: 100 + i } }; })());
      const committed = performance.now();
      const deadline = committed + 5000;
      let id: string | undefined;
      while (!id && performance.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 2));
        id = [...arrivals.keys()].find((key) => !before.has(key));
      }
      if (id) latencies.push(arrivals.get(id)! - committed);
    }
    await watched.services.deliveryWorker.stop();
    const summary = summariseLatencies(latencies);
    log(`commit to delivery (${summary.count} samples): p50 ${fmt.format(summary.p50)} ms, p99 ${fmt.format(summary.p99)} ms, max ${fmt.format(summary.max)} ms`);
    await watched.close();
  } finally {
    receiver.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
