/**
 * Report PDF render time and memory: `npm run bench:pdf` (add `--write` to put the figures into
 * docs/benchmarks.md). A report of 5 lots with 40 photos (8 a lot, 640x480 JPEGs) served from a
 * local server, as when the photo archive holds them; each language printed once, uncached (the
 * first print also starts the browser, and is reported on its own), then one cached answer.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { REPORT_LANGUAGES } from '../src/domain/report-language.ts';
import { createTestApp, testConfig } from '../test/support/app.ts';
import { createCustomer } from '../test/support/fixtures.ts';
import { everyFlagLots, photoJpegs, startPhotoHost } from '../test/browser/report-samples.ts';
import { replaceDocSection } from './support/benchmarks-doc.ts';

const write = process.argv.includes('--write');
const browserPath = process.env.PDF_BROWSER_PATH ?? '/usr/bin/chromium';

/** Resident memory (MiB) of the processes whose command line names the browser: the PDF renderer's Chromium. */
function browserRssMiB(): number {
  const out = execFileSync('ps', ['-eo', 'rss=,args='], { encoding: 'utf8' });
  const kib = out
    .split('\n')
    .filter((line) => /chrom/i.test(line) && line.includes('--headless'))
    .reduce((sum, line) => sum + Number(line.trim().split(/\s+/)[0] ?? 0), 0);
  return Math.round(kib / 1024);
}

/**
 * CPU time (ms) used so far by this process and every process below it (the renderer's Chromium),
 * from /proc: on a machine shared with other work, the wall-clock figures grow with the load while
 * this stays near what one print costs, so it is the figure to read an idle machine's time from.
 */
function treeCpuMs(): number {
  const ticks = 100; // USER_HZ on Linux
  const children = new Map<number, { pid: number; cpu: number }[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ppid = Number(fields[1]);
      // utime, stime, and the same for children it has reaped (a renderer that exited).
      const cpu = Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
      children.set(ppid, [...(children.get(ppid) ?? []), { pid: Number(name), cpu }]);
    } catch {
      // The process ended while we read.
    }
  }
  let total = 0;
  const stack = [process.pid];
  for (let pid = stack.pop(); pid !== undefined; pid = stack.pop()) {
    for (const child of children.get(pid) ?? []) {
      total += child.cpu;
      stack.push(child.pid);
    }
  }
  const own = process.cpuUsage();
  return (total * 1000) / ticks + (own.user + own.system) / 1000;
}

const helper = await chromium.launch({ executablePath: browserPath, headless: true, args: ['--no-sandbox', '--disable-gpu'] });
const jpegs = await photoJpegs(helper, 40);
await helper.close();
// The bench maps every photo off /gone/, so the host's 404 path is never asked for.
const { server: photoServer, base: photoBase } = await startPhotoHost(jpegs);

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'vinhistory-bench-pdf-'));
const t = await createTestApp('sqlite', { config: testConfig({ DATA_DIR: dataDir, OUTBOUND_ALLOW_PRIVATE: 'true', PDF_BROWSER_PATH: browserPath }) });
const lots = everyFlagLots(photoBase, 8).map((lot) => ({ ...lot, images: lot.images.map((url) => url.replace('/gone/', '/')) }));
await t.repos.lots.upsertBatch(lots);
const customer = await createCustomer(t.repos);
const search = await t.app.inject({ method: 'POST', url: '/api/v1/search', headers: { authorization: customer.token }, payload: { vin: lots[0]!.vin } });
const reportPath = new URL(search.json().report_url as string).pathname;

async function print(language: string): Promise<{ ms: number; cpuMs: number; bytes: number }> {
  const cpuBefore = treeCpuMs();
  const started = performance.now();
  const res = await t.app.inject({ url: `${reportPath}.pdf?lang=${language}&paper=a4` });
  if (res.statusCode !== 200) throw new Error(`PDF ${language}: ${res.statusCode} ${res.body.slice(0, 200)}`);
  return { ms: performance.now() - started, cpuMs: treeCpuMs() - cpuBefore, bytes: res.rawPayload.length };
}

const first = await print('en');
// The breakdown is of the warm prints: the first one's browser start would hide the rest.
t.app.services.metrics.pdfSteps.reset();
const runs: { language: string; ms: number; cpuMs: number; bytes: number }[] = [];
for (const language of REPORT_LANGUAGES.filter((l) => l !== 'en')) runs.push({ language, ...(await print(language)) });
const cachedStart = performance.now();
await print('uk');
const cachedMs = performance.now() - cachedStart;
const stepMs = await (async () => {
  const metric = await t.app.services.metrics.pdfSteps.get();
  const sums = new Map<string, { sum: number; count: number }>();
  for (const value of metric.values) {
    const step = String(value.labels.step);
    const entry = sums.get(step) ?? { sum: 0, count: 0 };
    if (value.metricName?.endsWith('_sum')) entry.sum = value.value;
    if (value.metricName?.endsWith('_count')) entry.count = value.value;
    sums.set(step, entry);
  }
  return sums;
})();
const nodeRss = Math.round(process.memoryUsage().rss / 1024 / 1024);
const browserRss = browserRssMiB();

await t.close();
await new Promise((resolve) => photoServer.close(resolve));
rmSync(dataDir, { recursive: true, force: true });

const times = runs.map((run) => run.ms).sort((a, b) => a - b);
const median = times[Math.floor(times.length / 2)]!;
const cpuTimes = runs.map((run) => run.cpuMs).sort((a, b) => a - b);
const load = os.loadavg().map((n) => n.toFixed(1)).join(', ');
const lines = [
  `Machine: ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown'}), Node ${process.version}, ${new Date().toISOString().slice(0, 10)}; load average at the end ${load}.`,
  '',
  '| what | figure |',
  '|---|---|',
  `| first PDF (starts the browser), en | ${first.ms.toFixed(0)} ms |`,
  `| uncached PDF, median of ${runs.length} languages (${runs.map((r) => r.language).join(', ')}) | ${median.toFixed(0)} ms |`,
  `| uncached PDF, CPU time (Node and Chromium together), median | ${cpuTimes[Math.floor(cpuTimes.length / 2)]!.toFixed(0)} ms |`,
  `| uncached PDF, slowest | ${times[times.length - 1]!.toFixed(0)} ms |`,
  `| cached PDF | ${cachedMs.toFixed(1)} ms |`,
  `| PDF size (5 lots, 40 photos) | ${(runs[0]!.bytes / 1024).toFixed(0)} KiB |`,
  ...['photos', 'html', 'page', 'content', 'print'].map((step) => {
    const entry = stepMs.get(step);
    return `| step: ${step}, mean of ${entry?.count ?? 0} uncached prints | ${entry && entry.count > 0 ? ((entry.sum / entry.count) * 1000).toFixed(0) : '-'} ms |`;
  }),
  `| memory: service (Node RSS) | ${nodeRss} MiB |`,
  `| memory: the renderer's Chromium (all its processes, RSS) | ${browserRss} MiB |`,
];
console.log(lines.join('\n'));
if (write) await replaceDocSection('docs/benchmarks.md', 'pdf', '## Report PDF: `npm run bench:pdf`', lines.join('\n'));
process.exit(0);
