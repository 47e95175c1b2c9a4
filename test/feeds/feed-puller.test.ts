import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { parse } from 'csv-parse/sync';
import pino from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createContainer, type Container } from '../../src/container.ts';
import { MemoryRateLimiter } from '../../src/limits/rate/memory-rate-limiter.ts';
import type { Lot } from '../../src/domain/lot.ts';
import { testConfig } from '../support/app.ts';
import { createTestDatabase, type TestDatabase } from '../support/databases.ts';
import { makeLot, validVin } from '../support/fixtures.ts';

/**
 * Pulls through the real container against a local HTTP server: conditional GET, gzip, paged APIs
 * that fail part-way, and every refusal (docs/feeds.md). SQLite only: the feeds' statements are the
 * same on both databases (the lease is tested on both in feed-scheduler.test.ts).
 */
type Handler = (request: IncomingMessage, response: ServerResponse) => void;

const COPART = readFileSync(new URL('../fixtures/copart/salesdata-49.csv', import.meta.url), 'utf8');
const BOT_WALL = readFileSync(new URL('../fixtures/copart/bot-wall.csv', import.meta.url), 'utf8');
const rows: string[][] = parse(COPART, { bom: true });
const [COPART_HEADER, COPART_ROW] = rows;
const quote = (values: readonly string[]) => values.map((value) => `"${value.replace(/"/g, '""')}"`).join(',');

/** A Copart sales-data CSV of `count` lots: the fixture's real row with its lot number and VIN varied. */
function copartCsv(count: number, firstLot: number, header: readonly string[] = COPART_HEADER!): string {
  const lotColumn = COPART_HEADER!.indexOf('Lot number');
  const vinColumn = COPART_HEADER!.indexOf('VIN');
  const rows = Array.from({ length: count }, (_, i) => {
    const row = [...COPART_ROW!, ...Array<string>(header.length - COPART_HEADER!.length).fill('')];
    row[lotColumn] = String(firstLot + i);
    row[vinColumn] = validVin(`1HGCM826${String(firstLot + i).padStart(8, '0')}`);
    return quote(row);
  });
  return `${quote(header)}\n${rows.join('\n')}\n`;
}

const ndjson = (lots: readonly Lot[]) => lots.map((lot) => JSON.stringify(lot)).join('\n') + '\n';

describe('pulling a feed', () => {
  let database: TestDatabase;
  let services: Container;
  let server: Server;
  let base: string;
  let dataDir: string;
  const handlers = new Map<string, Handler>();
  const hits = new Map<string, number>();
  let clock = Date.parse('2026-11-20T10:00:00.000Z');

  beforeAll(async () => {
    server = createServer((request, response) => {
      const url = new URL(request.url!, 'http://x');
      hits.set(url.pathname + url.search, (hits.get(url.pathname + url.search) ?? 0) + 1);
      const handler = handlers.get(url.pathname);
      if (!handler) {
        response.writeHead(404).end();
        return;
      }
      handler(request, response);
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    dataDir = mkdtempSync(path.join(tmpdir(), 'vinhistory-feeds-'));
    database = await createTestDatabase('sqlite');
    services = createContainer({
      config: testConfig({ OUTBOUND_ALLOW_PRIVATE: 'true', DATA_DIR: dataDir, OPERATOR_EMAIL: 'ops@example.com', FEED_TEST_COOKIE: 'session=s3cret' }),
      db: database.db,
      log: pino({ level: 'silent' }),
      rateLimiter: new MemoryRateLimiter(),
      now: () => new Date(clock),
      overrides: { feedTuning: { retries: 1, backoffMs: 1, maxBackoffMs: 5, headersTimeoutMs: 2_000, idleTimeoutMs: 2_000 }, random: () => 0.5 },
    });
  });

  afterAll(async () => {
    await services.close();
    await database.destroy();
    await new Promise((done) => server.close(done));
    rmSync(dataDir, { recursive: true, force: true });
  });

  beforeEach(() => {
    handlers.clear();
    hits.clear();
    clock += 3_600_000;
  });

  async function add(name: string, options: Partial<Parameters<Container['feeds']['add']>[0]> = {}) {
    const outcome = await services.feeds.add({ name, url: `${base}/${name}`, ...options });
    expect(outcome.kind).toBe('done');
  }

  async function run(name: string, acceptChanges = false) {
    const outcome = await services.feeds.runNow(name, acceptChanges);
    if (outcome.kind !== 'done') throw new Error(outcome.message);
    return outcome;
  }

  it('sends the validators of the last good pull: a 304 loads nothing, and the lots carry the feed as their source', async () => {
    const csv = copartCsv(3, 70_100_000);
    const seenHeaders: IncomingMessage['headers'][] = [];
    handlers.set('/copart-member', (request, response) => {
      seenHeaders.push(request.headers);
      if (request.headers['if-none-match'] === '"v1"') return response.writeHead(304).end();
      response.writeHead(200, { 'content-type': 'text/csv', etag: '"v1"', 'last-modified': 'Thu, 19 Nov 2026 08:00:00 GMT' }).end(csv);
    });
    // The cookie comes from the environment the pull runs in (the config's), never from the database.
    await add('copart-member', { format: 'copart-csv', headers: ['Cookie: env:FEED_TEST_COOKIE', 'X-Client: vinhistory-test'] });
    const first = await run('copart-member');
    expect(first.result).toMatchObject({ status: 'ok', counts: { read: 3, inserted: 3, skipped: 0 } });
    expect(seenHeaders[0]).toMatchObject({ cookie: 'session=s3cret', 'x-client': 'vinhistory-test', 'accept-encoding': 'gzip' });
    expect(JSON.stringify(await services.feeds.list())).not.toContain('s3cret');
    expect(JSON.stringify(await services.feeds.list())).not.toContain('vinhistory-test');

    const second = await run('copart-member');
    expect(second.result).toMatchObject({ status: 'not_modified', counts: { read: 0, inserted: 0, updated: 0 } });
    expect(seenHeaders[1]).toMatchObject({ 'if-none-match': '"v1"', 'if-modified-since': 'Thu, 19 Nov 2026 08:00:00 GMT' });
    expect(second.feed).toMatchObject({ lastStatus: 'not_modified', lastSuccessAt: new Date(clock).toISOString(), failuresInRow: 0 });

    const history = await database.repos.lotHistory.historyOf({ auction: 'copart', lotId: 70_100_000 });
    expect(history?.firstSource).toBe('copart-member');
  });

  it('reads a gzip NDJSON feed (Content-Encoding), and an env: header that is not set fails the pull with its name', async () => {
    const lots = [makeLot({ vin: validVin('1HGCM82633A20001') }), makeLot({ vin: validVin('1HGCM82633A20002') })];
    handlers.set('/vendor-ndjson', (request, response) => {
      expect(request.headers['accept-encoding']).toBe('gzip');
      response.writeHead(200, { 'content-type': 'application/x-ndjson', 'content-encoding': 'gzip' }).end(gzipSync(ndjson(lots)));
    });
    await add('vendor-ndjson', { format: 'ndjson' });
    expect((await run('vendor-ndjson')).result).toMatchObject({ status: 'ok', counts: { read: 2, inserted: 2 } });
    expect(await database.repos.lots.findByVin(lots[0]!.vin)).toHaveLength(1);

    await add('needs-token', { format: 'ndjson', headers: ['Authorization: env:FEED_TEST_UNSET_TOKEN'] });
    const unset = await run('needs-token');
    expect(unset.result).toMatchObject({ status: 'failed', error: expect.stringContaining('FEED_TEST_UNSET_TOKEN') });
  });

  it('resumes a paged API from the page that failed: nothing lost, nothing fetched or counted twice', async () => {
    const pages = [0, 1, 2, 3].map((page) => [0, 1, 2].map((i) => makeLot({ vin: validVin(`1HGCM82633B${page}000${i}`) })));
    let failPage3 = 2; // more than the one retry: the pull fails, and the next run resumes
    handlers.set('/vendor-api', (request, response) => {
      const page = Number(new URL(request.url!, 'http://x').searchParams.get('page') ?? '1');
      if (page === 3 && failPage3-- > 0) return response.writeHead(503).end('busy');
      const next = page < 4 ? `${base}/vendor-api?page=${page + 1}` : null;
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: pages[page - 1], links: { next } }));
    });
    await add('vendor-api', { format: 'ndjson', paged: true });
    const failed = await run('vendor-api');
    expect(failed.result).toMatchObject({ status: 'failed', error: expect.stringContaining('HTTP 503'), counts: { read: 6, inserted: 6 } });
    expect(failed.feed.checkpoint).toMatchObject({ pages: 2, nextUrl: `${base}/vendor-api?page=3` });
    expect((await services.feeds.list()).find((f) => f.name === 'vendor-api')?.lastStatus).toBe('failed');

    const resumed = await run('vendor-api');
    expect(resumed.result).toMatchObject({ status: 'ok', counts: { read: 12, inserted: 12, updated: 0, unchanged: 0 } });
    expect(hits.get('/vendor-api')).toBe(1);
    expect(hits.get('/vendor-api?page=2')).toBe(1);
    expect(hits.get('/vendor-api?page=4')).toBe(1);
    for (const page of pages) for (const lot of page) expect(await database.repos.lots.findByVin(lot.vin)).toHaveLength(1);
    expect(resumed.feed.checkpoint).toBeNull();
  });

  it('asks an incremental API for what changed since the start of the last good pull, following a Link header and a cursor', async () => {
    const seen: string[] = [];
    handlers.set('/changes', (request, response) => {
      const url = new URL(request.url!, 'http://x');
      seen.push(url.search);
      if (!url.searchParams.get('cursor')) {
        response.writeHead(200, { 'content-type': 'application/json', link: `<${base}/changes?cursor=c2>; rel="next"` }).end(JSON.stringify([makeLot({ vin: validVin('1HGCM82633C00001') })]));
      } else if (url.searchParams.get('cursor') === 'c2') {
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ items: [makeLot({ vin: validVin('1HGCM82633C00002') })], next_cursor: 'c3' }));
      } else {
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ items: [] }));
      }
    });
    await add('changes', { format: 'ndjson', cursorParam: 'cursor', updatedSinceParam: 'updated_since' });
    const started = new Date(clock).toISOString();
    expect((await run('changes')).result).toMatchObject({ status: 'ok', counts: { read: 2, inserted: 2 } });
    expect(seen).toEqual(['', '?cursor=c2', '?cursor=c3']);
    clock += 60_000;
    seen.length = 0;
    await run('changes');
    expect(seen[0]).toBe(`?updated_since=${encodeURIComponent(started)}`);
  });

  it('refuses a bot-challenge page served as text/csv, keeps the data, and emails the operator after three failures in a row and once on recovery', async () => {
    let wall = false;
    handlers.set('/walled', (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/csv' }).end(wall ? BOT_WALL : copartCsv(2, 70_200_000));
    });
    await add('walled', { format: 'copart-csv' });
    expect((await run('walled')).result.status).toBe('ok');
    wall = true;
    const mailBefore = (await services.mail.summary()).queued;
    for (let i = 0; i < 4; i++) {
      const refused = await run('walled');
      expect(refused.result).toMatchObject({ status: 'failed', error: expect.stringContaining('bot-challenge page') });
    }
    const feed = (await services.feeds.list()).find((f) => f.name === 'walled')!;
    expect(feed).toMatchObject({ lastStatus: 'failed', failuresInRow: 4, alerted: true });
    expect(await database.repos.lots.findByVin(validVin('1HGCM82670200000'))).toHaveLength(1);
    const alerts = await services.mail.list('retrying', 50).then(async (retrying) => [...retrying, ...(await database.repos.mailQueue.list('queued', 50))]);
    const failing = alerts.filter((m) => m.kind === 'feed_alert' && m.subject.includes('"walled" is failing'));
    expect(failing).toHaveLength(1);
    expect(failing[0]).toMatchObject({ recipient: 'ops@example.com' });
    expect((await services.mail.summary()).queued).toBe(mailBefore + 1);
    wall = false;
    expect((await run('walled')).result.status).toBe('ok');
    const queued = await database.repos.mailQueue.list('queued', 50);
    expect(queued.filter((m) => m.subject.includes('"walled" has recovered'))).toHaveLength(1);
  });

  it('refuses a truncated file, a changed CSV header and a file of another format, and takes a change once told to', async () => {
    let body = copartCsv(40, 70_300_000);
    handlers.set('/shrinking', (_request, response) => response.writeHead(200, { 'content-type': 'text/csv' }).end(body));
    await add('shrinking', { format: 'copart-csv' });
    expect((await run('shrinking')).result).toMatchObject({ status: 'ok', counts: { inserted: 40 } });

    body = copartCsv(40, 70_300_000).split('\n').slice(0, 8).join('\n');
    expect((await run('shrinking')).result).toMatchObject({ status: 'failed', error: expect.stringMatching(/^truncated: 7 rows where the last good pull had 40/) });

    body = copartCsv(40, 70_300_000, [...COPART_HEADER!, 'Buyer Fee']);
    expect((await run('shrinking')).result).toMatchObject({ status: 'failed', error: 'the CSV header changed: added "Buyer Fee"' });

    body = ndjson([makeLot({ vin: validVin('1HGCM82633D00001') })]);
    expect((await run('shrinking')).result).toMatchObject({ status: 'failed', error: 'the feed is copart-csv but the file is JSON' });

    body = copartCsv(40, 70_300_000, [...COPART_HEADER!, 'Buyer Fee']);
    expect((await run('shrinking', true)).result).toMatchObject({ status: 'ok', counts: { read: 40 } });
    expect((await services.feeds.get('shrinking')).kind === 'done' && (await services.feeds.get('shrinking'))).toMatchObject({ feed: { acceptChanges: false, failuresInRow: 0 } });
  });

  it('records the lots that left a listing feed as a version of their history, and their return', async () => {
    let count = 5;
    handlers.set('/listing', (_request, response) => response.writeHead(200, { 'content-type': 'text/csv' }).end(copartCsv(count, 70_400_000)));
    await add('listing', { format: 'copart-csv', listing: true });
    expect((await run('listing')).result).toMatchObject({ status: 'ok', left: 0 });
    count = 3;
    expect((await run('listing')).result).toMatchObject({ status: 'ok', left: 2, returned: 0 });
    const gone = await database.repos.lotHistory.historyOf({ auction: 'copart', lotId: 70_400_004 });
    expect(gone?.laterVersions.at(-1)).toMatchObject({ source: 'listing', changed: { listing: { from: 'listed', to: 'left' } } });
    const stayed = await database.repos.lotHistory.historyOf({ auction: 'copart', lotId: 70_400_000 });
    expect(stayed?.laterVersions.some((v) => 'listing' in v.changed)).toBe(false);
    count = 5;
    expect((await run('listing')).result).toMatchObject({ status: 'ok', left: 0, returned: 2 });
  });
});
