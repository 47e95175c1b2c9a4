/**
 * Report PDF render time and memory: `npm run bench:pdf` (add `--write` to put the figures into
 * docs/benchmarks.md). A report of 5 lots with 40 photos (8 a lot, 640x480 JPEGs) served from a
 * local server, as when the photo archive holds them; each language printed once, uncached (the
 * first print also starts the browser, and is reported on its own), then one cached answer.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { REPORT_LANGUAGES } from '../src/domain/report-language.ts';
import { createTestApp, testConfig } from '../test/support/app.ts';
import { createCustomer } from '../test/support/fixtures.ts';
import { everyFlagLots, photoJpegs } from '../test/browser/report-samples.ts';
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

const helper = await chromium.launch({ executablePath: browserPath, headless: true, args: ['--no-sandbox', '--disable-gpu'] });
const jpegs = await photoJpegs(helper, 40);
await helper.close();
const photoServer = createServer((request, response) => {
  const n = Number(/(\d+)\.jpg$/.exec(request.url ?? '')?.[1] ?? 0);
  response.writeHead(200, { 'content-type': 'image/jpeg' }).end(jpegs[n % jpegs.length]);
});
await new Promise<void>((resolve) => photoServer.listen(0, '127.0.0.1', resolve));
const photoBase = `http://127.0.0.1:${(photoServer.address() as AddressInfo).port}`;

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'vinhistory-bench-pdf-'));
const t = await createTestApp('sqlite', { config: testConfig({ DATA_DIR: dataDir, OUTBOUND_ALLOW_PRIVATE: 'true', PDF_BROWSER_PATH: browserPath }) });
const lots = everyFlagLots(photoBase, 8).map((lot) => ({ ...lot, images: lot.images.map((url) => url.replace('/gone/', '/')) }));
await t.repos.lots.upsertBatch(lots);
const customer = await createCustomer(t.repos);
const search = await t.app.inject({ method: 'POST', url: '/api/v1/search', headers: { authorization: customer.token }, payload: { vin: lots[0]!.vin } });
const reportPath = new URL(search.json().report_url as string).pathname;

async function print(language: string): Promise<{ ms: number; bytes: number }> {
  const started = performance.now();
  const res = await t.app.inject({ url: `${reportPath}.pdf?lang=${language}&paper=a4` });
  if (res.statusCode !== 200) throw new Error(`PDF ${language}: ${res.statusCode} ${res.body.slice(0, 200)}`);
  return { ms: performance.now() - started, bytes: res.rawPayload.length };
}

const first = await print('en');
const runs: { language: string; ms: number; bytes: number }[] = [];
for (const language of REPORT_LANGUAGES.filter((l) => l !== 'en')) runs.push({ language, ...(await print(language)) });
const cachedStart = performance.now();
await print('uk');
const cachedMs = performance.now() - cachedStart;
const nodeRss = Math.round(process.memoryUsage().rss / 1024 / 1024);
const browserRss = browserRssMiB();

await t.close();
await new Promise((resolve) => photoServer.close(resolve));
rmSync(dataDir, { recursive: true, force: true });

const times = runs.map((run) => run.ms).sort((a, b) => a - b);
const median = times[Math.floor(times.length / 2)]!;
const lines = [
  `Machine: ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown'}), Node ${process.version}, ${new Date().toISOString().slice(0, 10)}.`,
  '',
  '| what | figure |',
  '|---|---|',
  `| first PDF (starts the browser), en | ${first.ms.toFixed(0)} ms |`,
  `| uncached PDF, median of ${runs.length} languages (${runs.map((r) => r.language).join(', ')}) | ${median.toFixed(0)} ms |`,
  `| uncached PDF, slowest | ${times[times.length - 1]!.toFixed(0)} ms |`,
  `| cached PDF | ${cachedMs.toFixed(1)} ms |`,
  `| PDF size (5 lots, 40 photos) | ${(runs[0]!.bytes / 1024).toFixed(0)} KiB |`,
  `| memory: service (Node RSS) | ${nodeRss} MiB |`,
  `| memory: the renderer's Chromium (all its processes, RSS) | ${browserRss} MiB |`,
];
console.log(lines.join('\n'));
if (write) await replaceDocSection('docs/benchmarks.md', 'pdf', '## Report PDF: `npm run bench:pdf`', lines.join('\n'));
process.exit(0);
