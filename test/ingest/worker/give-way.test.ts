import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readFileInWorker } from '../../../src/ingest/worker/read-file-in-worker.ts';
import { storeFileInWorker } from '../../../src/ingest/worker/store-file-in-worker.ts';
import { migrateToLatest, openDatabase, type Db } from '../../../src/storage/database.ts';
import { createRepositories } from '../../../src/storage/repositories/index.ts';
import { GiveWay, RequestsInFlight, RUN_AFTER_FLOOR, withGiveWay } from '../../../src/worker-threads.ts';
import { fixture, lotsOf, readPrepared } from '../helpers.ts';

/** Polls until `check` holds (a worker thread's progress), with a generous deadline. */
async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('GiveWay: a thread pausing while counted requests are in flight', () => {
  it('does not pause with none in flight, or when switched off', () => {
    const requests = new RequestsInFlight();
    expect(new GiveWay({ buffer: requests.buffer, maxPauseMs: 10_000 }).pause()).toBe(0);
    requests.begin();
    expect(new GiveWay({ buffer: requests.buffer, maxPauseMs: 0 }).pause()).toBe(0);
    expect(requests.gaveWay().pauses).toBe(0);
  });

  it('the floor: a pause ends after maxPauseMs with requests still in flight, and the thread then works on without pausing', () => {
    const requests = new RequestsInFlight();
    requests.begin();
    const clock = { extra: 0 };
    const giveWay = new GiveWay({ buffer: requests.buffer, maxPauseMs: 40 }, () => performance.now() + clock.extra);
    const paused = giveWay.pause();
    expect(paused).toBeGreaterThanOrEqual(39);
    expect(paused).toBeLessThan(5_000);
    expect(requests.gaveWay()).toMatchObject({ pauses: 1, floorHits: 1 });
    // Within the run after the floor: no pause.
    expect(giveWay.pause()).toBe(0);
    // Past it: a pause again.
    clock.extra = 40 / RUN_AFTER_FLOOR + 1;
    expect(giveWay.pause()).toBeGreaterThan(0);
    expect(requests.gaveWay().floorHits).toBe(2);
    requests.end();
    expect(requests.inFlight).toBe(0);
  });
});

describe("a pull's threads give way to the server's counted requests", () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'vinhistory-give-way-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  async function freshDb(name: string): Promise<Db> {
    const db = await openDatabase({ kind: 'sqlite', file: path.join(dir, name) });
    await migrateToLatest(db);
    return db;
  }

  it('the storing thread stores nothing while a request is in flight, and goes on when the count drops to 0', async () => {
    const db = await freshDb('paused.sqlite');
    try {
      const file = fixture('copart/salesdata-59-quirks.csv');
      const expected = lotsOf(await readPrepared(file)).length;
      const requests = new RequestsInFlight();
      requests.begin();
      let batches = 0;
      const stored = withGiveWay({ buffer: requests.buffer, maxPauseMs: 600_000 }, () =>
        storeFileInWorker({ file, format: 'auto', batchSize: 1, source: 'test-feed', writer: db.dialect.bulkWriter()!, photoArchive: false }, { onStored: () => batches++ }),
      );
      // The storing thread reached its first transaction and waits there.
      await until(() => threadsWaiting(requests), 'the storing thread to wait');
      expect(await createRepositories(db).lots.count()).toBe(0);
      expect(batches).toBe(0);
      requests.end();
      const done = await stored;
      expect(done.summary.inserted).toBe(expected);
      expect(batches).toBe(expected);
      expect(await createRepositories(db).lots.count()).toBe(expected);
      const gave = requests.gaveWay();
      expect(gave.pauses).toBeGreaterThanOrEqual(1);
      expect(gave.floorHits).toBe(0);
    } finally {
      await db.close();
    }
  });

  it('the floor: requests that never stop slow the storing thread but do not stop it', async () => {
    const db = await freshDb('floor.sqlite');
    try {
      const file = fixture('copart/salesdata-59-quirks.csv');
      const expected = lotsOf(await readPrepared(file)).length;
      const requests = new RequestsInFlight();
      requests.begin();
      const done = await withGiveWay({ buffer: requests.buffer, maxPauseMs: 20 }, () =>
        storeFileInWorker({ file, format: 'auto', batchSize: 1, source: 'test-feed', writer: db.dialect.bulkWriter()!, photoArchive: false }),
      );
      expect(done.summary.inserted).toBe(expected);
      expect(requests.inFlight).toBe(1);
      expect(requests.gaveWay().floorHits).toBeGreaterThanOrEqual(1);
      expect(requests.gaveWay().pausedMs).toBeGreaterThanOrEqual(19);
    } finally {
      await db.close();
    }
  });

  it('the reading thread prepares no next chunk while a request is in flight, and goes on at 0', async () => {
    const file = fixture('copart/salesdata-59-quirks.csv');
    const expected = (await readPrepared(file)).prepared.length;
    expect(expected).toBeGreaterThan(2);
    const requests = new RequestsInFlight();
    requests.begin();
    const source = await withGiveWay({ buffer: requests.buffer, maxPauseMs: 600_000 }, () => readFileInWorker({ file, format: 'auto', chunkSize: 1, maxInFlight: 100 }));
    try {
      const chunks = source.chunks[Symbol.asyncIterator]();
      const first = await chunks.next();
      expect(first.done).toBe(false);
      // One chunk sent, then the pause: the second does not come while the request is in flight.
      await until(() => threadsWaiting(requests), 'the reading thread to wait');
      let second = false;
      const next = chunks.next().then((result) => {
        second = true;
        return result;
      });
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(second).toBe(false);
      requests.end();
      expect((await next).done).toBe(false);
      let count = 2;
      for (let result = await chunks.next(); !result.done; result = await chunks.next()) count++;
      expect(count).toBe(expected);
      expect(requests.gaveWay().pauses).toBeGreaterThanOrEqual(1);
    } finally {
      await source.close();
    }
  });
});

/**
 * Whether a thread waits on the count: Atomics.notify says how many it woke, so notify the count's
 * slot with nobody to wake but waiters (a waiter woken this way looks again and waits on).
 */
function threadsWaiting(requests: RequestsInFlight): boolean {
  return requests.inFlight > 0 && Atomics.notify(new Int32Array(requests.buffer), 0) > 0;
}
