/**
 * What each part of a search's commit costs on SQLite, without HTTP: the lean server's commit
 * (bench/lean-search-server.ts: the real statements, prepared once, several searches a
 * transaction, the background checkpointer running) repeated with one part changed at a time, the
 * variants interleaved round by round so that the machine's drift falls on all of them alike.
 * CPU is the process's (every thread: the checkpointer's backfill counts).
 *
 * Usage: npm run bench:commit-cost -- [--lots 100000] [--searches 3000] [--rounds 5] [--group 6]
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type BetterSqlite3 from 'better-sqlite3';
import { newSortableId } from '../src/domain/ids.ts';
import { billingPeriodAt } from '../src/limits/billing-period.ts';
import { migrateToLatest, openDatabase } from '../src/storage/database.ts';
import { lotsJsonByVinSqlite } from '../src/storage/dialects/sqlite/lot-json.ts';
import { PreparedQuery } from '../src/storage/prepared-query.ts';
import { PrincipalRecheck } from '../src/storage/principal-recheck.ts';
import { createRepositories } from '../src/storage/repositories/index.ts';
import { createUnboundedCustomer, loadSyntheticLots } from './support/bench-data.ts';

const { values } = parseArgs({
  options: {
    lots: { type: 'string', default: '100000' },
    searches: { type: 'string', default: '3000' },
    rounds: { type: 'string', default: '5' },
    group: { type: 'string', default: '6' },
  },
});
const searchesPerRun = Number(values.searches);
const rounds = Number(values.rounds);
const group = Number(values.group);

/** What a variant changes in the commit. */
interface Variant {
  name: string;
  recheck: boolean;
  counter: boolean;
  report: 'uuid' | 'time-ordered' | 'empty-lots' | 'none';
  search: boolean;
}
const VARIANTS: Variant[] = [
  { name: 'the contract (UUID v4 report id, lots in the report)', recheck: true, counter: true, report: 'uuid', search: true },
  { name: 'report id ordered by time (not the contract)', recheck: true, counter: true, report: 'time-ordered', search: true },
  { name: 'report with no lots (not the contract)', recheck: true, counter: true, report: 'empty-lots', search: true },
  { name: 'no report (not the contract)', recheck: true, counter: true, report: 'none', search: true },
  { name: 'counter only (not the contract)', recheck: true, counter: true, report: 'none', search: false },
  { name: 're-check only (not the contract)', recheck: true, counter: false, report: 'none', search: false },
];

/** A UUID-shaped id whose first 12 hex digits are the time: each insert lands at the index's end. */
function timeOrderedId(): string {
  const hex = Date.now().toString(16).padStart(12, '0') + randomUUID().replace(/-/g, '').slice(12);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

const dir = await mkdtemp(path.join(os.tmpdir(), 'vinhistory-commit-cost-'));
try {
  const file = path.join(dir, 'vinhistory.sqlite');
  const db = await openDatabase({ kind: 'sqlite', file }, { backgroundCheckpoint: true });
  await migrateToLatest(db);
  const repos = createRepositories(db);
  process.stderr.write(`loading ${values.lots} lots\n`);
  const { vins } = await loadSyntheticLots(repos, { count: Number(values.lots), seed: 1 });
  const customer = await createUnboundedCustomer(repos);
  const principal = (await repos.tokens.reload(customer.tokenId))!;
  const subscription = principal.subscription!;
  const raw = db.sqlite as BetterSqlite3.Database;
  const recheck = new PrincipalRecheck(db.kysely);
  const prepare = <P extends Record<string, unknown>>(query: PreparedQuery<P, unknown>) => {
    const statement = raw.prepare(query.sql);
    return (params: P) => (statement.reader ? statement.get(query.parameters(params)) : statement.run(query.parameters(params)));
  };
  const liveToken = prepare(recheck.liveToken);
  const inForce = prepare(recheck.subscriptionInForce);
  const count = prepare(repos.usageCounters.count);
  const insertReport = prepare(repos.reports.insertReport);
  const insertSearch = prepare(repos.searches.insertSearch);
  const lotsOf = raw.prepare(new PreparedQuery(db.kysely, ['vin'], (p: { vin: string }) => lotsJsonByVinSqlite(db.kysely, p.vin)).sql);
  const sample = Array.from({ length: 5000 }, (_, i) => vins[(i * 7919) % vins.length]!);
  const lotsJson = sample.map((vin) => `[${(lotsOf.all(vin) as { lot: string; images: string }[]).map((row) => `${row.lot.slice(0, -1)},"images":${row.images}}`).join(',')}]`);

  const commit = raw.transaction((variant: Variant, from: number) => {
    for (let i = from; i < from + group; i++) {
      const now = new Date();
      const at = now.toISOString();
      const periodStart = billingPeriodAt(new Date(subscription.startedAt), now).start.toISOString();
      if (variant.recheck) {
        liveToken({ tokenId: principal.tokenId, at });
        inForce({ accountId: principal.accountId, at });
      }
      if (variant.counter) count({ accountId: principal.accountId, periodStart, quota: subscription.monthlyQuota });
      const n = i % sample.length;
      const reportId = variant.report === 'none' ? null : variant.report === 'time-ordered' ? timeOrderedId() : randomUUID();
      if (reportId !== null) {
        const lots = variant.report === 'empty-lots' ? '[]' : lotsJson[n]!;
        insertReport({ id: reportId, accountId: principal.accountId, vin: sample[n]!, at, lots, sandbox: 0, tokenId: principal.tokenId });
      }
      if (variant.search) {
        insertSearch({
          id: newSortableId('srch', now.getTime()),
          account_id: principal.accountId,
          token_id: principal.tokenId,
          vin: sample[n]!,
          created_at: at,
          outcome: reportId === null ? 'not_found' : 'found',
          report_id: reportId,
          period_start: periodStart,
          sandbox: 0,
        });
      }
    }
  });

  const cpu = new Map<string, number[]>(VARIANTS.map((variant) => [variant.name, []]));
  let done = 0;
  for (let round = 0; round < rounds; round++) {
    for (const variant of VARIANTS) {
      const started = process.cpuUsage();
      for (let i = 0; i < searchesPerRun; i += group) commit.immediate(variant, done + i);
      // Let the checkpointer backfill what this run wrote, inside this run's measure.
      await new Promise((resolve) => setTimeout(resolve, 250));
      const used = process.cpuUsage(started);
      done += searchesPerRun;
      cpu.get(variant.name)!.push((used.user + used.system) / searchesPerRun);
    }
    process.stderr.write(`round ${round + 1} of ${rounds}\n`);
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  process.stdout.write(`\n${searchesPerRun} searches a run, ${group} a transaction, ${rounds} rounds; CPU of the process per search (all threads), µs\n\n`);
  process.stdout.write('| commit | median | runs |\n|---|---:|---|\n');
  for (const variant of VARIANTS) {
    const runs = cpu.get(variant.name)!;
    process.stdout.write(`| ${variant.name} | ${median(runs).toFixed(1)} | ${runs.map((x) => x.toFixed(0)).join(', ')} |\n`);
  }
  await db.close();
} finally {
  await rm(dir, { recursive: true, force: true });
}
