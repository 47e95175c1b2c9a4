/**
 * What the market section costs a report page: `npm run bench:report-market` (`--lots N`, default
 * 200,000 synthetic lots; `--write` puts the figures into docs/benchmarks.md). SQLite in memory,
 * lots from the seed generator through the importer; a report made by a search for each of five
 * sampled vehicles; then, round after round, the page of each report opened through inject()
 * (everything but the socket) and, apart, the market queries its section makes (the vehicle's, and
 * one per sold lot, up to 10), so that the section's share of the page is read off directly.
 */
import os from 'node:os';
import { seedLots } from '../src/dev/seed/seed-lots.ts';
import type { StoredReport } from '../src/domain/report.ts';
import { SALE_COMPARISON_MONTHS } from '../src/web/report/market.ts';
import { MARKET_COMPARED_SALES } from '../src/web/report/index.ts';
import { createTestApp } from '../test/support/app.ts';
import { createCustomer } from '../test/support/fixtures.ts';
import { replaceDocSection } from './support/benchmarks-doc.ts';
import { summariseLatencies, type LatencySummary } from './support/latencies.ts';

const args = process.argv.slice(2);
const write = args.includes('--write');
const lotsArg = args.indexOf('--lots');
const lots = lotsArg >= 0 ? Number(args[lotsArg + 1]) : 200_000;
const ROUNDS = 40;
if (!Number.isInteger(lots) || lots < 1000) throw new Error('--lots takes a whole number of at least 1000');

const t = await createTestApp('sqlite');
const seeded = await seedLots(t.app.services.ingest, { count: lots, seed: 24, batchSize: 5000, progress: false, signal: new AbortController().signal });
const customer = await createCustomer(t.repos, { quota: 1_000_000, rate: 1000 });
const reports: StoredReport[] = [];
for (const vin of seeded.sampleVins) {
  const res = await t.app.inject({ url: `/api/v1/search?vin=${vin}`, headers: { authorization: customer.token } });
  if (res.statusCode !== 200) continue;
  const report = await t.app.services.reports.find(new URL(res.json<{ report_url: string }>().report_url).pathname.split('/').pop()!);
  if (report) reports.push(report);
}
if (reports.length === 0) throw new Error('no sampled vehicle had lots to report on');

/** The section's own queries for a report, as the page makes them (src/web/report/index.ts). */
async function sectionQueries(report: StoredReport): Promise<number> {
  const asOf = new Date(report.createdAt);
  const subject = { kind: 'vin', vin: report.vin } as const;
  const sold = report.lots.filter((lot) => lot.sale_date !== null && (lot.price ?? 0) > 0 && Date.parse(lot.sale_date) <= asOf.getTime()).slice(0, MARKET_COMPARED_SALES);
  const values = await Promise.all([
    t.app.services.market.valueFor(subject, { primaryDamage: null, months: 12, asOf }),
    ...sold.map((lot) => t.app.services.market.valueFor(subject, { primaryDamage: null, months: SALE_COMPARISON_MONTHS, asOf: new Date(lot.sale_date!) })),
  ]);
  return values.reduce((sum, value) => sum + (value?.comparables.count ?? 0), 0);
}

const page: number[] = [];
const section: number[] = [];
let comparables = 0;
let queries = 0;
for (let round = 0; round < ROUNDS + 3; round++) {
  for (const report of reports) {
    let start = performance.now();
    const res = await t.app.inject({ url: `/report/${report.id}?lang=en` });
    const pageMs = performance.now() - start;
    if (res.statusCode !== 200 || !res.body.includes('<section class="market"')) throw new Error(`report ${report.id}: ${res.statusCode}, no market section`);
    start = performance.now();
    const counted = await sectionQueries(report);
    const sectionMs = performance.now() - start;
    // The first rounds warm the statement caches and the JIT.
    if (round < 3) continue;
    page.push(pageMs);
    section.push(sectionMs);
    comparables = counted;
    queries += 1 + report.lots.filter((lot) => lot.sale_date !== null && (lot.price ?? 0) > 0).slice(0, MARKET_COMPARED_SALES).length;
  }
}
await t.close();

const ms = (value: number) => value.toFixed(1);
const row = (name: string, s: LatencySummary) => `| ${name} | ${s.count} | ${ms(s.mean)} | ${ms(s.p50)} | ${ms(s.p90)} | ${ms(s.p99)} | ${ms(s.max)} |`;
const pageSummary = summariseLatencies(page);
const sectionSummary = summariseLatencies(section);
const cpu = os.cpus();
const body = `
\`npm run bench:report-market -- --lots ${lots}\`: SQLite in memory, ${lots.toLocaleString('en-US')} synthetic lots, ${reports.length} reports opened ${ROUNDS} times each after 3 warm-up rounds; ${(queries / page.length).toFixed(1)} market queries per page on average (the vehicle's and one per sold lot); the last report's section counted ${comparables} comparables over its queries. ${cpu.length} × ${cpu[0]?.model ?? 'unknown CPU'}, load average ${os.loadavg().map((load) => load.toFixed(1)).join(' / ')} at the end, Node ${process.version}.

| ms | samples | mean | p50 | p90 | p99 | max |
|---|---|---|---|---|---|---|
${row('report page (inject, whole page)', pageSummary)}
${row("its market section's queries alone", sectionSummary)}
`;
console.log(body);
if (write) await replaceDocSection('docs/benchmarks.md', 'report-market', '## The report page\'s market section', body);
