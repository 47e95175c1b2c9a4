import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest, openDatabase, type Db } from '../../src/storage/database.ts';
import { createRepositories, type Repositories } from '../../src/storage/repositories/index.ts';
import { newTestSchemaName } from '../support/databases.ts';
import { TEST_POSTGRES_URL } from '../support/env.ts';
import { makeLot, validVin } from '../support/fixtures.ts';
import { startInstance, stopInstance, type Instance } from './instances.ts';

/**
 * A short lease (renewed every second), long enough that a loaded machine's stalls do not lose it
 * before the kill, and a poll short enough that the survivor notices at once that it ran out.
 */
const LEASE_MS = 3_000;
const POLL_MS = 200;
const PAGES = 12;
const PER_PAGE = 10;

/**
 * A vendor's paged JSON API on 127.0.0.1, slow enough (250 ms a page) that a pull is mid-way when
 * its instance is killed; it counts each page's requests.
 */
class PagedApi {
  readonly requests = new Map<number, number>();
  url = '';
  private server: Server | null = null;

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const page = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('page') ?? '1');
      this.requests.set(page, (this.requests.get(page) ?? 0) + 1);
      const lots = Array.from({ length: PER_PAGE }, (_, i) => {
        const n = (page - 1) * PER_PAGE + i;
        return makeLot({ vin: validVin(`1FTFW1E5${String(n).padStart(3, '0')}B0001`), lot_id: 91_000_000 + n });
      });
      setTimeout(() => {
        if (res.destroyed) return;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ data: lots, next: page < PAGES ? `${this.url}?page=${page + 1}` : null }));
      }, 250);
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/lots`;
    return this;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

/**
 * The takeover on real processes: two `vinhistory serve` instances share one PostgreSQL schema's
 * feeds; the one pulling a paged feed is killed (SIGKILL) part-way. Once its lease has run out the
 * other takes the feed over, resumes from the last stored page, and finishes: every lot stored
 * once, no page but the one in flight asked for twice.
 */
describe.runIf(TEST_POSTGRES_URL)('a feed pulled by two instances on one PostgreSQL, the puller killed mid-pull', () => {
  let db: Db;
  let repos: Repositories;
  let api: PagedApi;
  let instances: Instance[] = [];

  beforeAll(async () => {
    const schema = newTestSchemaName();
    db = await openDatabase({ kind: 'postgres', url: TEST_POSTGRES_URL! }, { schema });
    await migrateToLatest(db);
    repos = createRepositories(db);
    api = await new PagedApi().start();
    const databaseUrl = new URL(TEST_POSTGRES_URL!);
    databaseUrl.searchParams.set('options', `-c search_path=${schema}`);
    const env: Record<string, string> = {
      DATABASE_URL: databaseUrl.toString(),
      PUBLIC_BASE_URL: 'https://api.vinhistory.test',
      OUTBOUND_ALLOW_PRIVATE: 'true',
      WEBHOOK_WORKER: 'false',
      FEEDS_LEASE_MS: String(LEASE_MS),
      FEEDS_POLL_MS: String(POLL_MS),
    };
    const started = await Promise.allSettled([startInstance(env), startInstance(env)]);
    instances = started.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
    const failed = started.find((result) => result.status === 'rejected');
    if (failed) throw failed.reason;
  }, 90_000);

  afterAll(async () => {
    await Promise.all(instances.map((instance) => stopInstance(instance)));
    await api?.stop();
    await db?.close();
  });

  const feedRow = () => db.kysely.selectFrom('feeds').selectAll().where('name', '=', 'vendor').executeTakeFirstOrThrow();

  it('is taken over after the lease by the other instance, which resumes and finishes it: nothing lost, nothing doubled', async () => {
    const operatorToken = (await repos.operatorTokens.create('takeover proof')).token;
    const added = await fetch(`${instances[0]!.url}/admin/v1/feeds`, {
      method: 'POST',
      headers: { authorization: `Bearer ${operatorToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'vendor', url: `${api.url}?page=1`, format: 'ndjson', paged: true, every: '24h' }),
    });
    expect(added.status).toBe(201);

    // Mid-pull: page 4 asked for, so pages before it are stored and checkpointed.
    const midBy = Date.now() + 10_000;
    while (!api.requests.has(4) && Date.now() < midBy) await sleep(20);
    expect(api.requests.has(4)).toBe(true);
    const atKill = await feedRow();
    const owner = String(atKill.lease_owner);
    const victim = instances.findIndex((instance) => owner.includes(`:${instance.process.pid}:`));
    expect(victim).toBeGreaterThanOrEqual(0);
    instances[victim]!.process.kill('SIGKILL');
    await instances[victim]!.exited;
    const before = new Map(api.requests);
    // Where the survivor is to resume: the page after the last one stored.
    const resumeAt = Number(new URL(JSON.parse(String(atKill.checkpoint)).nextUrl).searchParams.get('page'));
    const survivor = instances[1 - victim]!;

    const doneBy = Date.now() + LEASE_MS + 10_000;
    let row = await feedRow();
    while (row.last_status !== 'ok' && Date.now() < doneBy) {
      await sleep(100);
      row = await feedRow();
    }
    expect(row.last_status).toBe('ok');
    // The survivor finished it: its lease was the last, and it gave it up.
    expect(survivor.logs.some((line) => line.includes('"feed pulled"') && line.includes('"vendor"'))).toBe(true);

    // Nothing lost, nothing doubled: every lot once, from the feed, and no page asked for twice
    // but the one the killed instance had in flight.
    const lots = await db.kysely.selectFrom('lots').select(['lot_id', 'source']).where('lot_id', '>=', 91_000_000).execute();
    expect(lots.map((lot) => lot.lot_id).sort()).toEqual(Array.from({ length: PAGES * PER_PAGE }, (_, n) => 91_000_000 + n));
    const afterKill = [...api.requests].flatMap(([page, count]) => Array.from({ length: count - (before.get(page) ?? 0) }, () => page)).sort((a, b) => a - b);
    expect(afterKill).toEqual(Array.from({ length: PAGES - resumeAt + 1 }, (_, i) => resumeAt + i));
    expect([...api.requests.keys()].sort((a, b) => a - b)).toEqual(Array.from({ length: PAGES }, (_, i) => i + 1));
  }, 40_000);
});
