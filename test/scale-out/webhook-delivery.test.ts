import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest, openDatabase, type Db } from '../../src/storage/database.ts';
import { createRepositories, type Repositories } from '../../src/storage/repositories/index.ts';
import { newTestSchemaName } from '../support/databases.ts';
import { TEST_POSTGRES_URL, TEST_REDIS_URL } from '../support/env.ts';
import { createCustomer, makeLot, validVin, type Customer } from '../support/fixtures.ts';
import { startInstance, stopInstance, type Instance } from './instances.ts';

/** One request at the receiver: when it came in, when its answer went out (or its connection broke). */
interface Delivery {
  eventId: string;
  in: number;
  out: number | null;
  /** The sender's connection closed before the answer was written (its instance was killed). */
  aborted: boolean;
}

/**
 * A receiver on 127.0.0.1 that answers 200 slowly (300-800 ms), so that deliveries are in flight
 * when an instance is killed, and keeps every request's times to show none overlapped another
 * of the same event.
 */
class SlowReceiver {
  readonly deliveries: Delivery[] = [];
  url = '';
  private server: Server | null = null;

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const delivery: Delivery = { eventId: String(req.headers['vinhistory-event-id'] ?? ''), in: Date.now(), out: null, aborted: false };
      this.deliveries.push(delivery);
      res.on('close', () => {
        if (delivery.out !== null) return;
        delivery.out = Date.now();
        delivery.aborted = true;
      });
      req.resume();
      req.on('end', () => {
        setTimeout(() => {
          if (res.destroyed) return;
          delivery.out = Date.now();
          res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
        }, 300 + Math.random() * 500);
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks`;
    return this;
  }

  inFlight(): number {
    return this.deliveries.filter((delivery) => delivery.out === null).length;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

/** The shortest lease the config accepts: the killed instance's events wait this long for another. */
const LEASE_MS = 15_000;

/**
 * The delivery proof on real processes: three `vinhistory serve` instances, each with its delivery
 * worker, share one PostgreSQL schema's outbox; one of them is killed (SIGKILL) while its deliveries
 * are in flight. Every event is still delivered, no event is ever at the receiver twice at the same
 * time, and the only repeats are events the killed instance held (at least once, never lost).
 */
describe.runIf(TEST_POSTGRES_URL)('webhook delivery by three instances on one PostgreSQL, one killed mid-delivery', () => {
  let db: Db;
  let repos: Repositories;
  let receiver: SlowReceiver;
  let instances: Instance[] = [];
  let customer: Customer;
  let operatorToken: string;

  beforeAll(async () => {
    const schema = newTestSchemaName();
    db = await openDatabase({ kind: 'postgres', url: TEST_POSTGRES_URL! }, { schema });
    await migrateToLatest(db);
    repos = createRepositories(db);
    customer = await createCustomer(repos);
    operatorToken = (await repos.operatorTokens.create('scale-out proof')).token;
    receiver = await new SlowReceiver().start();

    const databaseUrl = new URL(TEST_POSTGRES_URL!);
    databaseUrl.searchParams.set('options', `-c search_path=${schema}`);
    const env: Record<string, string> = {
      DATABASE_URL: databaseUrl.toString(),
      PUBLIC_BASE_URL: 'https://api.vinhistory.test',
      OUTBOUND_ALLOW_PRIVATE: 'true',
      WEBHOOK_WORKER: 'true',
      WEBHOOK_LEASE_MS: String(LEASE_MS),
      WEBHOOK_SECRET_KEY: 'scale-out-proof-webhook-secret-key-0123456789',
      ...(TEST_REDIS_URL ? { REDIS_URL: TEST_REDIS_URL, REDIS_TIMEOUT_MS: '250' } : {}),
    };
    const started = await Promise.allSettled([startInstance(env), startInstance(env), startInstance(env)]);
    instances = started.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
    const failed = started.find((result) => result.status === 'rejected');
    // afterAll stops the ones that did start.
    if (failed) throw failed.reason;
  }, 90_000);

  afterAll(async () => {
    await Promise.all(instances.map((instance) => stopInstance(instance)));
    await receiver?.stop();
    await db?.close();
  });

  async function call(instance: number, method: string, url: string, body: unknown): Promise<Response> {
    return fetch(`${instances[instance]!.url}${url}`, {
      method,
      headers: { authorization: customer.token, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  }

  /** The killed instance's owner names its leases `<host>:<pid>:<random>`. */
  async function leasedBy(pid: number): Promise<Map<string, number>> {
    const rows = await db.kysely
      .selectFrom('webhook_outbox')
      .select(['id', 'lease_until'])
      .where('account_id', '=', customer.accountId)
      .where('status', '=', 'pending')
      .where('lease_owner', 'like', `%:${pid}:%`)
      .execute();
    return new Map(rows.map((row) => [row.id, Date.parse(String(row.lease_until))]));
  }

  it('delivers every event at least once, never one twice at the same time, repeating only what the killed instance held', async () => {
    expect((await call(0, 'PUT', '/api/v1/webhook', { url: receiver.url })).status).toBe(201);
    const vins = Array.from({ length: 30 }, (_, i) => validVin(`1HGCM826${String(i).padStart(2, '0')}A00920`));
    for (const [i, vin] of vins.entries()) expect((await call(i % 3, 'POST', '/api/v1/watches', { vin })).status).toBe(201);

    // 30 VINs x 5 lots: 150 lot.created events, written in the import's transaction.
    const lots = vins.flatMap((vin, v) => Array.from({ length: 5 }, (_, i) => makeLot({ vin, lot_id: 83_000_000 + v * 10 + i })));
    const imported = await fetch(`${instances[0]!.url}/admin/v1/lots`, {
      method: 'POST',
      headers: { authorization: `Bearer ${operatorToken}`, 'content-type': 'application/x-ndjson' },
      body: lots.map((lot) => JSON.stringify(lot)).join('\n'),
    });
    expect(imported.status).toBe(200);
    const events = (await db.kysely.selectFrom('webhook_outbox').select('id').where('account_id', '=', customer.accountId).execute()).map((row) => row.id);
    expect(events).toHaveLength(lots.length);

    // Mid-delivery: the instance with the most deliveries at the receiver, once deliveries are in
    // flight. (Its leases alone do not say: an instance may hold leases on events it has not sent
    // yet, and the one holding the most may have nothing at the receiver to cut.)
    const inFlightBy = Date.now() + 20_000;
    while (receiver.inFlight() < 10 && Date.now() < inFlightBy) await sleep(20);
    expect(receiver.inFlight()).toBeGreaterThanOrEqual(10);
    const held = await Promise.all(instances.map((instance) => leasedBy(instance.process.pid!)));
    const atReceiver = new Set(receiver.deliveries.filter((delivery) => delivery.out === null).map((delivery) => delivery.eventId));
    const sending = held.map((leases) => [...leases.keys()].filter((id) => atReceiver.has(id)).length);
    const victim = sending.reduce((best, count, index) => (count > sending[best]! ? index : best), 0);
    instances[victim]!.process.kill('SIGKILL');
    const killedAt = Date.now();
    await instances[victim]!.exited;
    // What it held when it died (frozen now: nobody else may touch these until the lease ends).
    const orphaned = await leasedBy(instances[victim]!.process.pid!);
    expect(orphaned.size).toBeGreaterThan(0);

    const deadline = Date.now() + LEASE_MS + 30_000;
    let delivered = 0;
    while (Date.now() < deadline) {
      const row = await db.kysely
        .selectFrom('webhook_outbox')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('account_id', '=', customer.accountId)
        .where('status', '=', 'delivered')
        .executeTakeFirstOrThrow();
      delivered = Number(row.n);
      if (delivered === events.length) break;
      await sleep(250);
    }
    // An answer still on its way is recorded by now.
    await sleep(500);

    // None lost: every event delivered, and answered 200 at the receiver at least once.
    expect(delivered).toBe(events.length);
    const answered = new Set(receiver.deliveries.filter((d) => !d.aborted && d.out !== null).map((d) => d.eventId));
    expect(events.filter((id) => !answered.has(id))).toEqual([]);

    // Never twice at the same time: the receiver's intervals of one event do not overlap.
    const byEvent = new Map<string, Delivery[]>();
    for (const delivery of receiver.deliveries) byEvent.set(delivery.eventId, [...(byEvent.get(delivery.eventId) ?? []), delivery]);
    const overlaps: string[] = [];
    for (const [id, deliveries] of byEvent) {
      const sorted = [...deliveries].sort((a, b) => a.in - b.in);
      for (let i = 1; i < sorted.length; i++) {
        if (sorted[i]!.in < (sorted[i - 1]!.out ?? Infinity)) overlaps.push(`${id} at ${sorted[i]!.in - killedAt} ms from the kill`);
      }
    }
    expect(overlaps).toEqual([]);
    expect([...byEvent.keys()].sort()).toEqual([...events].sort());

    // At least once: repeats only of what the killed instance held, each taken over after its lease.
    const repeated = [...byEvent].filter(([, deliveries]) => deliveries.length > 1).map(([id]) => id);
    expect(repeated.filter((id) => !orphaned.has(id))).toEqual([]);
    for (const id of repeated) expect(byEvent.get(id)!.at(-1)!.in).toBeGreaterThanOrEqual(orphaned.get(id)!);
    const cut = receiver.deliveries.filter((d) => d.aborted);
    expect(cut.length).toBeGreaterThan(0);
    for (const delivery of cut) expect(orphaned.has(delivery.eventId)).toBe(true);
    expect(receiver.deliveries).toHaveLength(events.length + repeated.reduce((sum, id) => sum + byEvent.get(id)!.length - 1, 0));

    console.info(
      `webhook scale-out proof: ${events.length} events, ${receiver.deliveries.length} deliveries; instance ${victim} killed holding ${orphaned.size} ` +
        `(${cut.length} cut mid-answer); ${repeated.length} delivered twice, all of them held by the killed instance; no overlap`,
    );
  }, 90_000);
});
