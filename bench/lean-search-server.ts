/**
 * The leanest server of the same search contract: issue 10's premise check. The issue holds the
 * real server to 0.3 of the bare HTTP stack on the word of a lean prototype that reached 0.30-0.41
 * on another day; this one is measured in the same run as the real server and the ceiling
 * (`npm run bench:search -- --lean`), so the three ratios say how much of the gap is the product's
 * own code and how much is SQLite's work, which neither can skip.
 *
 * What it keeps of the contract, on the same database file, connection settings and checkpointer:
 * - the token checked on every request (sha256 of the header, looked up in a map filled at start:
 *   the cached principal), and its rate per second counted in memory;
 * - the VIN validated, its lots read with the real server's statement (one probe of lots_vin_idx,
 *   each lot's JSON text as stored) and ordered newest first;
 * - every search committed before it is answered: the same statements as the real commit (the
 *   token and the subscription in force re-checked, the quota counted, the report and the search
 *   record inserted), several searches of one event-loop turn in one transaction;
 * - the same body and limit headers, byte for byte in size.
 * What it leaves out is everything else a product has: the Idempotency-Key, sandbox tokens,
 * lookups by lot, errors as the API's envelope (it answers 4xx with a bare text), helmet's headers,
 * metrics, request logging, the request id, the request timeout, `last_used_at`. None of them is
 * in the loop of a benchmark request but the headers, metrics, log line and request id.
 *
 * With --commit none|recheck|counter|report it stops each commit short (support/lean-store.ts):
 * not the contract, a measure of what each step of the commit costs under load. With --thread the
 * lots are read and the searches committed on a thread of their own (support/lean-store-worker.ts),
 * and the event loop keeps only HTTP: a measure of what a second core gives. With --processes N, N
 * such servers share the port (Node's cluster), the other way to use a second core; it leaves out
 * one more part of the contract: the rate per second is counted in each process, not across them
 * (an exact one would be a statement in the commit, or Redis), and a process waits for the other's
 * write lock in SQLite's busy handler. GET /stats counts the transactions and searches (of the one
 * process that answers it).
 *
 * Usage: node bin/run-ts.js bench/lean-search-server.ts --port <port> --data-dir <dir> --base-url <url> [--commit all] [--thread] [--processes N]
 */
import { hash } from 'node:crypto';
import cluster from 'node:cluster';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import Fastify from 'fastify';
import { sql } from 'kysely';
import { loadConfig } from '../src/config.ts';
import type { ActivePrincipal } from '../src/domain/principal.ts';
import { billingPeriodAt } from '../src/limits/billing-period.ts';
import { openDatabase } from '../src/storage/database.ts';
import { createRepositories } from '../src/storage/repositories/index.ts';
import { startModuleWorker } from '../src/worker-threads.ts';
import { COMMIT_LEVELS, leanStore, type CommitLevel, type Committed, type LeanSearch } from './support/lean-store.ts';
import type { StoreRequest } from './support/lean-store-worker.ts';

const { values } = parseArgs({
  options: {
    port: { type: 'string' },
    host: { type: 'string', default: '127.0.0.1' },
    'data-dir': { type: 'string' },
    'base-url': { type: 'string' },
    commit: { type: 'string', default: 'all' },
    thread: { type: 'boolean', default: false },
    processes: { type: 'string', default: '1' },
  },
});
if (!values.port || !values['data-dir'] || !values['base-url'] || !COMMIT_LEVELS.includes(values.commit as CommitLevel)) {
  console.error(`usage: lean-search-server.ts --port <port> --data-dir <dir> --base-url <url> [--commit ${COMMIT_LEVELS.join('|')}] [--thread] [--processes N] [--host 127.0.0.1]`);
  process.exit(2);
}
const processes = Number(values.processes);
if (processes > 1 && cluster.isPrimary) {
  // Node's cluster: the workers share the port, each with its own connection to the one database
  // file (SQLite's write lock taken in turn by BEGIN IMMEDIATE) and its own checkpointer.
  let stopping = false;
  // Each worker runs this file through tsx again (a fork runs process.argv[1] with no loader).
  cluster.setupPrimary({ exec: fileURLToPath(new URL('../bin/run-ts.js', import.meta.url)), args: process.argv.slice(1) });
  for (let i = 0; i < processes; i++) cluster.fork();
  cluster.on('exit', (worker, code, signal) => {
    if (!stopping) {
      console.error(`lean worker ${worker.process.pid} ended (${signal ?? code})`);
      process.exit(1);
    }
    if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(0);
  });
  const stop = () => {
    stopping = true;
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM');
    setTimeout(() => process.exit(1), 10_000);
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  // The primary only forks and waits: the rest of this module is the workers'.
  await new Promise(() => {});
}
const baseUrl = values['base-url'];
const level = values.commit as CommitLevel;

// The real server's connection: WAL, synchronous=NORMAL, the memory map, and the background
// checkpointer every 100 ms (storage/dialects/sqlite/connection.ts, checkpointer.ts).
const { database } = loadConfig({ DATA_DIR: values['data-dir'] });
if (database.kind !== 'sqlite') throw new Error('the lean server runs on SQLite');
const db = await openDatabase(database, { backgroundCheckpoint: true });
const repos = createRepositories(db);

/** Every live token with a subscription in force, by the sha256 of its secret: the cached principals. */
const principals = new Map<string, ActivePrincipal>();
{
  const now = new Date();
  const { rows } = await sql<{ id: string; token_hash: string }>`select id, token_hash from api_tokens where revoked_at is null and sandbox = 0`.execute(db.kysely);
  for (const row of rows) {
    const principal = await repos.tokens.reload(row.id, now);
    if (principal?.subscription) principals.set(row.token_hash, principal as ActivePrincipal);
  }
}

/** Transactions and searches committed: their ratio is the mean group commit. */
const stats = { transactions: 0, searches: 0 };
type Settle = { resolve: (outcome: Committed | null) => void; reject: (error: unknown) => void };
let pending: { search: LeanSearch; settle: Settle }[] = [];

/** Commits a search with the others of this event-loop turn, on the event loop or in the store thread. */
const commit: (search: LeanSearch) => Promise<Committed | null> = values.thread ? await threadCommit() : loopCommit();

/** A search joins the others of this event-loop turn; the first of them schedules `dispatch` for the check phase. */
function joiningTurn(dispatch: () => void) {
  return (search: LeanSearch) =>
    new Promise<Committed | null>((resolve, reject) => {
      if (pending.length === 0) setImmediate(dispatch);
      pending.push({ search, settle: { resolve, reject } });
    });
}

function loopCommit() {
  const store = leanStore(db, level);
  const flush = () => {
    const batch = pending;
    pending = [];
    let outcomes: (Committed | null)[];
    try {
      outcomes = store.commitAll(batch.map((item) => ({ ...item.search, lots: store.readLots(item.search.vin) })));
    } catch (error) {
      console.error(error);
      for (const item of batch) item.settle.reject(error);
      return;
    }
    stats.transactions++;
    stats.searches += batch.length;
    batch.forEach((item, i) => item.settle.resolve(outcomes[i]!));
  };
  return joiningTurn(flush);
}

async function threadCommit() {
  if (database.kind !== 'sqlite') throw new Error('unreachable');
  const worker = startModuleWorker(import.meta.url, 'support/lean-store-worker', { workerData: { file: database.file, level } });
  const waiting = new Map<number, Settle>();
  let nextId = 1;
  await new Promise<void>((resolve, reject) => {
    worker.once('error', reject);
    worker.on('message', (message: { ready: true } | { ids: number[]; outcomes: (Committed | null)[] } | { ids: number[]; error: string }) => {
      if ('ready' in message) return resolve();
      stats.transactions++;
      stats.searches += message.ids.length;
      message.ids.forEach((id, i) => {
        const settle = waiting.get(id)!;
        waiting.delete(id);
        if ('error' in message) settle.reject(new Error(message.error));
        else settle.resolve(message.outcomes[i]!);
      });
    });
  });
  const send = () => {
    const batch = pending;
    pending = [];
    const ids = batch.map((item) => {
      const id = nextId++;
      waiting.set(id, item.settle);
      return id;
    });
    worker.postMessage({ ids, searches: batch.map((item) => item.search) } satisfies StoreRequest);
  };
  return joiningTurn(send);
}

const VIN = /^[A-HJ-NPR-Z0-9]{17}$/;
/** Searches admitted in the current second, by token: the in-memory rate limiter's fixed window. */
let windowSecond = 0;
const admitted = new Map<string, number>();

const app = Fastify({ logger: false });
app.get('/stats', async () => stats);
app.get<{ Querystring: { vin?: string } }>('/api/v1/search', async (request, reply) => {
  const header = request.headers.authorization;
  const secret = header?.startsWith('Bearer ') ? header.slice(7) : header;
  const principal = secret === undefined ? undefined : principals.get(hash('sha256', secret, 'hex'));
  if (principal === undefined) return reply.code(401).send('invalid token');
  const vin = request.query.vin?.toUpperCase();
  if (vin === undefined || !VIN.test(vin)) return reply.code(422).send('vin: 17 characters, no I, O or Q');

  const now = new Date();
  const second = Math.floor(now.getTime() / 1000);
  if (second !== windowSecond) {
    windowSecond = second;
    admitted.clear();
  }
  const rate = principal.subscription.ratePerSecond;
  const inWindow = (admitted.get(principal.tokenId) ?? 0) + 1;
  if (inWindow > rate) return reply.code(429).send('rate limited');
  admitted.set(principal.tokenId, inWindow);

  const period = billingPeriodAt(new Date(principal.subscription.startedAt), now);
  const outcome = await commit({ principal, vin, nowMs: now.getTime(), periodStart: period.start.toISOString() });
  if (outcome === null) return reply.code(401).send('token revoked or plan changed');
  const quota = principal.subscription.monthlyQuota;
  if (outcome.used > quota) return reply.code(429).send('quota exceeded');
  if (outcome.reportId === null) return reply.code(404).send('no records');

  const periodSeconds = Math.ceil((period.end.getTime() - period.start.getTime()) / 1000);
  const resetSeconds = Math.ceil((period.end.getTime() - now.getTime()) / 1000);
  return reply
    .headers({
      'ratelimit-policy': `"second";q=${rate};w=1, "month";q=${quota};w=${periodSeconds}`,
      ratelimit: `"second";r=${rate - inWindow};t=1, "month";r=${quota - outcome.used};t=${resetSeconds}`,
      'x-ratelimit-limit': String(rate),
      'x-ratelimit-remaining': String(rate - inWindow),
      'content-type': 'application/json; charset=utf-8',
    })
    .send(`{"status":"success","vin":"${vin}","origin_timestamp":"${now.toISOString()}","lots":[${outcome.lots.join(',')}],"report_url":"${outcome.reportBaseUrl ?? baseUrl}/report/${outcome.reportId}"}`);
});

const shutdown = async () => {
  await app.close();
  await db.close();
  process.exit(0);
};
process.once('SIGTERM', () => void shutdown());
process.once('SIGINT', () => void shutdown());

await app.listen({ port: Number(values.port), host: values.host });
