/**
 * Where the time of one search goes. Runs the search path in-process, one request at a time (no
 * sockets, no load generator competing for the CPU), on a SQLite file loaded like bench:search's,
 * and times each step and every SQL statement it runs: the time inside SQLite (better-sqlite3's
 * run/all) against the time around it (Kysely building and compiling queries, our code, Fastify).
 *
 * Usage: node bin/run-ts.js bench/search-statements.ts [--lots 100000] [--iterations 3000] [--seed 1]
 *        [--wal-autocheckpoint PAGES]   (SQLite's setting for the searches; 0 turns automatic
 *                                        checkpoints off, to see what they cost a commit)
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Kysely } from 'kysely';
import pino from 'pino';
import { buildApp } from '../src/app.ts';
import { createContainer } from '../src/container.ts';
import { loadConfig } from '../src/config.ts';
import { migrateToLatest, type Db } from '../src/storage/database.ts';
import { isSqliteUniqueViolation, openSqlite } from '../src/storage/dialects/sqlite/connection.ts';
import { SqliteStorageDialect } from '../src/storage/dialects/sqlite/index.ts';
import type { Database } from '../src/storage/schema.ts';
import { billingPeriodAt } from '../src/limits/billing-period.ts';
import type { LotJson } from '../src/domain/lot.ts';
import { createRepositories } from '../src/storage/repositories/index.ts';
import { MemoryRateLimiter } from '../src/limits/rate/memory-rate-limiter.ts';
import { createUnboundedCustomer, loadSyntheticLots } from './support/bench-data.ts';
import { summariseLatencies } from './support/latencies.ts';

const { values } = parseArgs({
  options: {
    lots: { type: 'string', default: '100000' },
    iterations: { type: 'string', default: '3000' },
    seed: { type: 'string', default: '1' },
    'wal-autocheckpoint': { type: 'string' },
  },
});
const lotCount = Number(values.lots);
const iterations = Number(values.iterations);
const seed = Number(values.seed);
for (const [name, value] of [['lots', lotCount], ['iterations', iterations], ['seed', seed]] as const) {
  if (!Number.isSafeInteger(value) || value < (name === 'seed' ? 0 : 1)) {
    console.error(`--${name} must be a positive integer`);
    process.exit(2);
  }
}

const autocheckpoint = values['wal-autocheckpoint'] === undefined ? null : Number(values['wal-autocheckpoint']);
if (autocheckpoint !== null && !(Number.isSafeInteger(autocheckpoint) && autocheckpoint >= 0)) {
  console.error('--wal-autocheckpoint must be a number of pages (0 for none)');
  process.exit(2);
}

const WARMUP = Math.min(500, iterations);
const log = (message: string) => process.stderr.write(`${message}\n`);
const us = (ms: number) => (ms * 1000).toFixed(0);

/** Statement timings of the stage being measured, by SQL text; null while not measuring. */
let statements: Map<string, number[]> | null = null;

/** Wraps better-sqlite3's prepare so that every execution of a statement is timed. */
function timeStatements(raw: ReturnType<typeof openSqlite>['raw']): void {
  const prepare = raw.prepare.bind(raw);
  raw.prepare = ((sql: string) => {
    const statement = prepare(sql) as unknown as Record<'run' | 'get' | 'all' | 'iterate', (...args: unknown[]) => unknown>;
    for (const method of ['run', 'get', 'all', 'iterate'] as const) {
      const original = statement[method].bind(statement);
      statement[method] = (...args: unknown[]) => {
        const started = performance.now();
        try {
          return original(...args);
        } finally {
          if (statements) {
            const elapsed = performance.now() - started;
            const list = statements.get(sql);
            if (list) list.push(elapsed);
            else statements.set(sql, [elapsed]);
          }
        }
      };
    }
    return statement;
  }) as typeof raw.prepare;
}

interface StageResult {
  name: string;
  calls: number[];
  statements: Map<string, number[]>;
}

async function stage(name: string, vins: string[], run: (vin: string) => Promise<void>): Promise<StageResult> {
  for (let i = 0; i < WARMUP; i++) await run(vins[Math.floor(Math.random() * vins.length)]!);
  statements = new Map();
  const calls: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const vin = vins[Math.floor(Math.random() * vins.length)]!;
    const started = performance.now();
    await run(vin);
    calls.push(performance.now() - started);
  }
  const result = { name, calls, statements };
  statements = null;
  return result;
}

const tempDir = await mkdtemp(path.join(os.tmpdir(), 'vinhistory-bench-breakdown-'));
try {
  const config = loadConfig({ NODE_ENV: 'production', DATA_DIR: path.join(tempDir, 'data'), PUBLIC_BASE_URL: 'http://127.0.0.1:3000', LOG_LEVEL: 'silent' });
  if (config.database.kind !== 'sqlite') throw new Error('expected SQLite');
  const { dialect, raw } = openSqlite({ file: config.database.file });
  timeStatements(raw);
  // The same handle openDatabase builds, over the instrumented connection.
  const kysely = new Kysely<Database>({ dialect });
  const dialectOfDb = new SqliteStorageDialect(kysely, raw, null, null);
  const db: Db = {
    kysely,
    dialect: dialectOfDb,
    onClose: () => {},
    isUniqueViolation: isSqliteUniqueViolation,
    ping: async () => {},
    close: () => dialectOfDb.close(),
  };
  await migrateToLatest(db);
  const repos = createRepositories(db);
  log(`loading ${lotCount.toLocaleString('en-US')} lots`);
  const { vins, seconds } = await loadSyntheticLots(repos, { count: lotCount, seed });
  log(`loaded in ${seconds.toFixed(1)} s; measuring ${iterations} searches per step after ${WARMUP} warm-up calls`);
  const customer = await createUnboundedCustomer(repos);
  if (autocheckpoint !== null) raw.pragma(`wal_autocheckpoint = ${autocheckpoint}`);
  const walCheckpointPages = raw.pragma('wal_autocheckpoint', { simple: true });
  const rateLimiter = new MemoryRateLimiter();
  const services = createContainer({ config, db, rateLimiter, log: pino({ level: 'silent' }) });
  const app = await buildApp({ services, logger: false });
  await app.ready();

  const principal = (await repos.tokens.authenticate(customer.token))!;
  const subscription = principal.subscription!;

  const results: StageResult[] = [];
  results.push(
    await stage('authenticate: token, subscription, plan', vins, async () => {
      await repos.tokens.authenticate(customer.token);
    }),
  );
  results.push(
    await stage('find the lots of a VIN', vins, async (vin) => {
      await repos.lots.findByVin(vin);
    }),
  );
  // The lots come from the store beforehand so that this step times the transaction alone.
  const preloaded = new Map<string, LotJson[]>();
  for (const vin of vins) if (preloaded.size < 5_000) preloaded.set(vin, (await repos.lots.findJsonByVin(vin)).lots);
  const preloadedVins = [...preloaded.keys()];
  results.push(
    await stage('commit: usage counter, report, search record', preloadedVins, async (vin) => {
      const now = new Date();
      await repos.searchCommit.commit({
        principal,
        accountId: principal.accountId,
        tokenId: principal.tokenId,
        vin,
        now,
        periodStart: billingPeriodAt(new Date(subscription.startedAt), now).start.toISOString(),
        quota: subscription.monthlyQuota,
        lots: preloaded.get(vin)!,
        idempotencyKey: null,
      });
    }),
  );
  results.push(
    await stage('whole search in-process: GET /api/v1/search by inject()', vins, async (vin) => {
      const response = await app.inject({ method: 'GET', url: `/api/v1/search?vin=${vin}`, headers: { authorization: customer.token } });
      if (response.statusCode !== 200) throw new Error(`search answered ${response.statusCode}: ${response.body.slice(0, 300)}`);
    }),
  );

  const lines: string[] = [];
  lines.push(
    `${lotCount.toLocaleString('en-US')} lots, ${iterations} calls per step, one at a time, wal_autocheckpoint ${walCheckpointPages}. Times in microseconds per call.`,
    '',
  );
  lines.push('| step | mean | p50 | p99 | max | of which in SQLite (mean) | outside SQLite (mean) |', '|---|---:|---:|---:|---:|---:|---:|');
  for (const result of results) {
    const calls = summariseLatencies(result.calls);
    let inSqlite = 0;
    for (const list of result.statements.values()) for (const value of list) inSqlite += value;
    inSqlite /= result.calls.length;
    lines.push(`| ${result.name} | ${us(calls.mean)} | ${us(calls.p50)} | ${us(calls.p99)} | ${us(calls.max)} | ${us(inSqlite)} | ${us(calls.mean - inSqlite)} |`);
  }
  const whole = results.at(-1)!;
  lines.push('', `Statements of one whole search (${whole.name}):`, '');
  lines.push('| statement | per search | mean | p50 | p99 | max |', '|---|---:|---:|---:|---:|---:|');
  const rows = [...whole.statements].map(([sql, list]) => ({ sql, list, summary: summariseLatencies(list) }));
  rows.sort((a, b) => b.summary.mean * b.list.length - a.summary.mean * a.list.length);
  for (const { sql, list, summary } of rows) {
    const text = sql.replace(/\s+/g, ' ').replace(/\|/g, '\\|');
    lines.push(`| \`${text.length > 90 ? `${text.slice(0, 87)}...` : text}\` | ${(list.length / whole.calls.length).toFixed(2)} | ${us(summary.mean)} | ${us(summary.p50)} | ${us(summary.p99)} | ${us(summary.max)} |`);
  }
  process.stdout.write(`${lines.join('\n')}\n`);

  await app.close();
  await rateLimiter.close();
  await db.close();
} finally {
  await rm(tempDir, { recursive: true, force: true });
}
