import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createContainer, type Container } from '../../src/container.ts';
import { MemoryRateLimiter } from '../../src/limits/rate/memory-rate-limiter.ts';
import { migrateToLatest, openDatabase, type Db } from '../../src/storage/database.ts';
import { createRepositories } from '../../src/storage/repositories/index.ts';
import { nextRunAfter } from '../../src/feeds/feed-scheduler.ts';
import type { Feed } from '../../src/domain/feed.ts';
import { testConfig } from '../support/app.ts';
import { DIALECTS, newTestSchemaName } from '../support/databases.ts';
import { TEST_POSTGRES_URL } from '../support/env.ts';
import { makeLot, validVin } from '../support/fixtures.ts';

const LEASE_MS = 60_000;

describe('when a feed is next due', () => {
  const feed = (nextRunAt: string, everySeconds = 900) => ({ nextRunAt, everySeconds }) as Feed;
  it('is its due time plus its interval, never in the past, and a pull before it leaves the schedule as it was', () => {
    const now = new Date('2026-11-20T10:05:00.000Z');
    expect(nextRunAfter(feed('2026-11-20T10:00:00.000Z'), now)).toBe('2026-11-20T10:15:00.000Z');
    // A pull that was due long ago (the service was down): the next is an interval from now.
    expect(nextRunAfter(feed('2026-11-20T08:00:00.000Z'), now)).toBe('2026-11-20T10:20:00.000Z');
    // `feeds run` before the due time keeps the due time.
    expect(nextRunAfter(feed('2026-11-20T10:10:00.000Z'), now)).toBe('2026-11-20T10:10:00.000Z');
  });
});

/**
 * Two instances (two containers, each its own scheduler; on PostgreSQL each with its own pool, as
 * two processes would be) polling one database: a feed is pulled once per due time, and a lease
 * left by a puller that died is taken over once it has run out.
 */
describe.each(DIALECTS)('two instances pulling feeds (%s)', (dialect) => {
  let server: Server;
  let base: string;
  let hits = 0;
  let dbs: Db[];
  let instances: Container[];
  let dataDir: string;
  let clock = Date.parse('2026-11-20T10:00:00.000Z');

  beforeAll(async () => {
    server = createServer((_request, response) => {
      hits++;
      // Slow enough that both instances' polls overlap the pull.
      setTimeout(() => response.writeHead(200, { 'content-type': 'application/x-ndjson' }).end(`${JSON.stringify(makeLot({ vin: validVin('1HGCM82633E00001'), lot_id: 71_000_000 }))}\n`), 30);
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    dataDir = mkdtempSync(path.join(tmpdir(), 'vinhistory-feeds-'));
    if (dialect === 'postgres') {
      const schema = newTestSchemaName();
      dbs = [await openDatabase({ kind: 'postgres', url: TEST_POSTGRES_URL! }, { schema }), await openDatabase({ kind: 'postgres', url: TEST_POSTGRES_URL! }, { schema })];
    } else {
      const file = path.join(dataDir, 'shared.sqlite');
      dbs = [await openDatabase({ kind: 'sqlite', file }), await openDatabase({ kind: 'sqlite', file })];
    }
    await migrateToLatest(dbs[0]!);
    instances = dbs.map((db) =>
      createContainer({
        config: testConfig({ OUTBOUND_ALLOW_PRIVATE: 'true', DATA_DIR: dataDir, FEEDS_LEASE_MS: String(LEASE_MS) }),
        db,
        log: pino({ level: 'silent' }),
        rateLimiter: new MemoryRateLimiter(),
        now: () => new Date(clock),
      }),
    );
    expect((await instances[0]!.feeds.add({ name: 'shared', url: `${base}/feed.ndjson`, format: 'ndjson', every: '15m' })).kind).toBe('done');
  });

  afterAll(async () => {
    for (const instance of instances) await instance.close();
    for (const db of dbs) await db.close();
    await new Promise((done) => server.close(done));
    rmSync(dataDir, { recursive: true, force: true });
  });

  const pollBoth = async () => (await Promise.all(instances.map((instance) => instance.feedScheduler.tick()))).reduce((a, b) => a + b, 0);

  it('pulls a feed exactly once per due time, whichever instance polls', async () => {
    for (let due = 0; due < 3; due++) {
      const before = hits;
      expect(await pollBoth()).toBe(1);
      expect(hits - before).toBe(1);
      // Polled again before the next due time: nothing.
      clock += 14 * 60_000;
      expect(await pollBoth()).toBe(0);
      expect(hits - before).toBe(1);
      clock += 60_000;
    }
    const [feed] = await instances[1]!.feeds.list();
    expect(feed).toMatchObject({ lastStatus: 'ok', leaseOwner: null, nextRunAt: new Date(clock).toISOString() });
  });

  it('takes over the feed of a puller that died once its lease has run out', async () => {
    // Instance 0 takes the lease and dies without a word (kill -9: nothing renews or releases it).
    const killed = createRepositories(dbs[0]!);
    const [claimed] = await killed.feeds.claimDue('killed-instance', new Date(clock), LEASE_MS, 1);
    expect(claimed?.name).toBe('shared');
    const before = hits;
    clock += LEASE_MS - 1_000;
    expect(await pollBoth()).toBe(0);
    clock += 2_000;
    expect(await pollBoth()).toBe(1);
    expect(hits - before).toBe(1);
    const [feed] = await instances[0]!.feeds.list();
    expect(feed).toMatchObject({ lastStatus: 'ok', leaseOwner: null });
  });
});
