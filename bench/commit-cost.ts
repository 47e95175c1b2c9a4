/**
 * What each part of a search's commit costs on SQLite, without HTTP: the lean server's commit
 * (bench/support/lean-store.ts: the real statements, prepared once, several searches a
 * transaction, the background checkpointer running) repeated with one part changed at a time, the
 * variants interleaved round by round so that the machine's drift falls on all of them alike.
 * CPU is the process's (every thread: the checkpointer's backfill counts).
 *
 * It then times the lots read two ways, interleaved the same way: as the search reads them, and with
 * each lot's count of versions (what a snapshot naming versions needs, src/history/report-snapshot.ts),
 * and prints the bytes a report's snapshot stores both ways.
 *
 * Usage: npm run bench:commit-cost -- [--lots 100000] [--searches 3000] [--rounds 5] [--group 6]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { ActivePrincipal } from '../src/domain/principal.ts';
import { billingPeriodAt } from '../src/limits/billing-period.ts';
import { migrateToLatest, openDatabase } from '../src/storage/database.ts';
import { createRepositories } from '../src/storage/repositories/index.ts';
import { createUnboundedCustomer, loadSyntheticLots } from './support/bench-data.ts';
import { leanStore, type CommitPlan, type LeanSearch } from './support/lean-store.ts';

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

/** Every variant re-checks the principal first; what follows is its plan. */
const VARIANTS: { name: string; plan: CommitPlan }[] = [
  { name: 'report copying the lots (before 0025; UUID v4 report id)', plan: { counter: true, report: 'uuid', search: true } },
  { name: 'report id ordered by time (not the contract)', plan: { counter: true, report: 'time-ordered', search: true } },
  { name: 'report naming lot versions (0025: the service now)', plan: { counter: true, report: 'named', search: true } },
  { name: 'report with no lots (not the contract)', plan: { counter: true, report: 'empty-lots', search: true } },
  { name: 'no report (not the contract)', plan: { counter: true, report: 'none', search: true } },
  { name: 'counter only (not the contract)', plan: { counter: true, report: 'none', search: false } },
  { name: 're-check only (not the contract)', plan: { counter: false, report: 'none', search: false } },
];

const dir = await mkdtemp(path.join(os.tmpdir(), 'vinhistory-commit-cost-'));
try {
  const file = path.join(dir, 'vinhistory.sqlite');
  const db = await openDatabase({ kind: 'sqlite', file }, { backgroundCheckpoint: true });
  await migrateToLatest(db);
  const repos = createRepositories(db);
  process.stderr.write(`loading ${values.lots} lots\n`);
  const { vins } = await loadSyntheticLots(repos, { count: Number(values.lots), seed: 1 });
  const customer = await createUnboundedCustomer(repos);
  const principal = (await repos.tokens.reload(customer.tokenId)) as ActivePrincipal;
  const stores = VARIANTS.map((variant) => leanStore(db, variant.plan));
  const sample = Array.from({ length: 5000 }, (_, i) => vins[(i * 7919) % vins.length]!);
  const lotsOf = sample.map((vin) => stores[0]!.readLots(vin));
  const namedOf = sample.map((vin) => stores[0]!.readLotsNamed(vin).named);
  const searchAt = (i: number): LeanSearch => {
    const now = new Date();
    const n = i % sample.length;
    const periodStart = billingPeriodAt(new Date(principal.subscription.startedAt), now).start.toISOString();
    return { principal, vin: sample[n]!, lots: lotsOf[n]!, named: namedOf[n]!, nowMs: now.getTime(), periodStart };
  };

  const cpu = VARIANTS.map((): number[] => []);
  let done = 0;
  for (let round = 0; round < rounds; round++) {
    for (const [v, store] of stores.entries()) {
      const started = process.cpuUsage();
      for (let i = 0; i < searchesPerRun; i += group) store.commitAll(Array.from({ length: group }, (_, k) => searchAt(done + i + k)));
      // Let the checkpointer backfill what this run wrote, inside this run's measure.
      await new Promise((resolve) => setTimeout(resolve, 250));
      const used = process.cpuUsage(started);
      done += searchesPerRun;
      cpu[v]!.push((used.user + used.system) / searchesPerRun);
    }
    process.stderr.write(`round ${round + 1} of ${rounds}\n`);
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  process.stdout.write(`\n${searchesPerRun} searches a run, ${group} a transaction, ${rounds} rounds; CPU of the process per search (all threads), µs\n\n`);
  process.stdout.write('| commit | median | runs |\n|---|---:|---|\n');
  for (const [v, variant] of VARIANTS.entries()) {
    const runs = cpu[v]!;
    process.stdout.write(`| ${variant.name} | ${median(runs).toFixed(1)} | ${runs.map((x) => x.toFixed(0)).join(', ')} |\n`);
  }

  // The lots read, as the search reads them and with each lot's count of versions, interleaved.
  const reads = [
    { name: 'lots as JSON (the search before 0025)', read: (vin: string) => stores[0]!.readLotsCopied(vin).length },
    { name: 'lots as JSON with each count of versions (0025: the search now)', read: (vin: string) => stores[0]!.readLotsNamed(vin).lots.length },
  ];
  const readCpu = reads.map((): number[] => []);
  for (let round = 0; round < rounds; round++) {
    for (const [r, variant] of reads.entries()) {
      const started = process.cpuUsage();
      for (let i = 0; i < searchesPerRun; i++) variant.read(sample[i % sample.length]!);
      const used = process.cpuUsage(started);
      readCpu[r]!.push((used.user + used.system) / searchesPerRun);
    }
  }
  process.stdout.write('\n| lots read | median | runs |\n|---|---:|---|\n');
  for (const [r, variant] of reads.entries()) {
    const runs = readCpu[r]!;
    process.stdout.write(`| ${variant.name} | ${median(runs).toFixed(1)} | ${runs.map((x) => x.toFixed(1)).join(', ')} |\n`);
  }
  const found = sample.flatMap((_, n) => (lotsOf[n]!.length > 0 ? [n] : []));
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const copied = mean(found.map((n) => Buffer.byteLength(`[${lotsOf[n]!.join(',')}]`)));
  const named = mean(found.map((n) => Buffer.byteLength(namedOf[n]!)));
  const lots = mean(found.map((n) => lotsOf[n]!.length));
  process.stdout.write(`\nSnapshot bytes per report (${found.length} found of ${sample.length}, ${lots.toFixed(2)} lots each): copied ${copied.toFixed(0)}, named ${named.toFixed(0)}\n`);
  await db.close();
} finally {
  await rm(dir, { recursive: true, force: true });
}
