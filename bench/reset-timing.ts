/**
 * Does the password-reset form tell, by its timing, whether an address has an account? Serves
 * the real app (as `vinhistory serve` does, mail worker running) with SMTP_URL pointing at a local
 * SMTP server that waits before its greeting (a slow server: the send took ~390 ms in the request
 * before the mail queue), and times POST /forgot-password over HTTP for addresses with and
 * without an account, interleaved. Each request comes from its own address (X-Forwarded-For) and
 * each known address is asked for once, so that no throttle answers instead.
 *
 * The difference of the medians is reported, and the median of the paired differences (each
 * known request against the unknown one beside it), which drift on a shared machine cancels out.
 * `--no-worker` leaves the mail worker stopped: the requests' own work alone.
 *
 * Usage: npm run bench:reset-timing -- [--requests 20] [--smtp-delay-ms 400] [--no-worker] [--database-url postgres://...]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pino from 'pino';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { createContainer } from '../src/container.ts';
import { migrateToLatest, openDatabase } from '../src/storage/database.ts';
import { createRepositories } from '../src/storage/repositories/index.ts';
import { TestSmtpServer } from '../test/support/smtp-server.ts';

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '20' },
    'smtp-delay-ms': { type: 'string', default: '400' },
    'database-url': { type: 'string' },
    'no-worker': { type: 'boolean', default: false },
  },
});
const requests = Number(values.requests);
const smtpDelayMs = Number(values['smtp-delay-ms']);
if (!Number.isInteger(requests) || requests < 1 || !(smtpDelayMs >= 0)) {
  console.error('usage: npm run bench:reset-timing -- [--requests 20] [--smtp-delay-ms 400] [--database-url postgres://...]');
  process.exit(2);
}

const smtp = await TestSmtpServer.start();
smtp.greetingDelayMs = smtpDelayMs;
const dataDir = mkdtempSync(path.join(tmpdir(), 'vinhistory-reset-timing-'));
const config = loadConfig({
  NODE_ENV: 'production',
  PUBLIC_BASE_URL: 'https://vinhistory.test',
  DATA_DIR: dataDir,
  SMTP_URL: smtp.url,
  TRUST_PROXY: 'true',
  LOG_LEVEL: 'silent',
  ...(values['database-url'] ? { DATABASE_URL: values['database-url'] } : {}),
});
const schema = values['database-url'] ? `bench_reset_${process.pid}` : undefined;
const db = await openDatabase(config.database, schema ? { schema } : {});
await migrateToLatest(db);
const services = createContainer({ config, db, log: pino({ level: 'silent' }) });
const app = await buildApp({ services, logger: false });
await app.listen({ port: 0, host: '127.0.0.1' });
if (!values['no-worker']) services.mailDelivery.start();
const origin = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;

const repos = createRepositories(db);
const run = Date.now().toString(36);
const known: string[] = [];
for (let i = 0; i < requests + 5; i++) {
  const email = `known-${run}-${i}@example.com`;
  await repos.accounts.create(email);
  known.push(email);
}
const unknown = Array.from({ length: requests + 5 }, (_, i) => `unknown-${run}-${i}@example.com`);

let address = 0;
/** One browser's visit: the form (CSRF token and cookie), then the timed POST. */
async function timeReset(email: string): Promise<{ ms: number; status: number; body: string }> {
  const ip = `198.18.${Math.floor(++address / 250)}.${1 + (address % 250)}`;
  const page = await fetch(`${origin}/forgot-password`, { headers: { 'x-forwarded-for': ip } });
  const html = await page.text();
  const csrf = /name="_csrf" value="([^"]+)"/.exec(html)![1]!;
  const cookie = page.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
  const started = performance.now();
  const res = await fetch(`${origin}/forgot-password`, {
    method: 'POST',
    headers: { 'x-forwarded-for': ip, cookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ _csrf: csrf, email }).toString(),
  });
  const body = await res.text();
  return { ms: performance.now() - started, status: res.status, body };
}

// Warm-up (JIT, prepared statements, the first SMTP connection), not counted.
for (let i = 0; i < 5; i++) {
  await timeReset(known.pop()!);
  await timeReset(unknown.pop()!);
}
const times = { known: [] as number[], unknown: [] as number[] };
const statuses = new Set<number>();
for (let i = 0; i < requests; i++) {
  // Alternate which goes first, so that neither always follows the other's background send.
  const order: ('known' | 'unknown')[] = i % 2 === 0 ? ['known', 'unknown'] : ['unknown', 'known'];
  for (const kind of order) {
    const result = await timeReset(kind === 'known' ? known[i]! : unknown[i]!);
    statuses.add(result.status);
    times[kind].push(result.ms);
  }
}
const sentBefore = smtp.received.length;
if (values['no-worker']) await services.mailDelivery.drain();
await smtp.waitForMessages(requests + 5);

const quantile = (values: number[], q: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))]!;
const row = (kind: 'known' | 'unknown') =>
  `| ${kind} | ${requests} | ${quantile(times[kind], 0.5).toFixed(1)} | ${quantile(times[kind], 0.9).toFixed(1)} | ${Math.min(...times[kind]).toFixed(1)} | ${Math.max(...times[kind]).toFixed(1)} |`;
const paired = times.known.map((ms, i) => ms - times.unknown[i]!);
console.log(
  `POST /forgot-password over HTTP, ${config.database.kind}, SMTP greeting delayed ${smtpDelayMs} ms, mail worker ${values['no-worker'] ? 'stopped (drained after)' : 'running'}; statuses: ${[...statuses].join(', ')}`,
);
console.log('| address | requests | median ms | p90 ms | fastest ms | slowest ms |');
console.log('|---|---:|---:|---:|---:|---:|');
console.log(row('known'));
console.log(row('unknown'));
console.log(`difference of medians: ${(quantile(times.known, 0.5) - quantile(times.unknown, 0.5)).toFixed(2)} ms; median of paired differences: ${quantile(paired, 0.5).toFixed(2)} ms`);
console.log(`mails received while the requests ran: ${sentBefore} (the worker sends in the background); all ${requests + 5} received in the end`);

await app.close();
await services.close();
if (schema) await db.kysely.schema.dropSchema(schema).cascade().execute();
await db.close();
await smtp.close();
rmSync(dataDir, { recursive: true, force: true });
