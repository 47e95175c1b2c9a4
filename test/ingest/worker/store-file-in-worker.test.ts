import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { IngestError } from '../../../src/ingest/ingest-error.ts';
import { storeFileInWorker } from '../../../src/ingest/worker/store-file-in-worker.ts';
import { slicePolicy } from '../../../src/ingest/worker/write-slices.ts';
import { migrateToLatest, openDatabase, type Db } from '../../../src/storage/database.ts';
import { createRepositories } from '../../../src/storage/repositories/index.ts';
import { generateLots } from '../../../src/dev/seed/synthetic-lots.ts';
import { createCustomer, principalAt } from '../../support/fixtures.ts';
import { randomVin } from '../../storage/repositories/helpers.ts';
import { fixture, lotsOf, readPrepared, rejectionsOf } from '../helpers.ts';

async function freshDb(dir: string, name: string): Promise<Db> {
  const db = await openDatabase({ kind: 'sqlite', file: path.join(dir, name) });
  await migrateToLatest(db);
  return db;
}

describe("a feed's file stored on threads of its own", () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'vinhistory-store-worker-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('stores every lot the in-process reading prepares, with the source, the keys and each batch timed', async () => {
    const db = await freshDb(dir, 'store.sqlite');
    try {
      const file = fixture('copart/salesdata-59-quirks.csv');
      const expected = await readPrepared(file);
      const keys: [string, number][] = [];
      const stored = await storeFileInWorker(
        { file, format: 'auto', batchSize: 2, source: 'test-feed', writer: db.dialect.bulkWriter()!, photoArchive: false },
        { onStored: (batch) => keys.push(...batch) },
      );
      const lots = lotsOf(expected);
      expect(stored.failure).toBeNull();
      expect(stored.description).toBe('Copart sales-data CSV (59 columns)');
      expect(stored.summary.skipped).toBe(rejectionsOf(expected).length);
      expect(stored.summary.inserted + stored.summary.updated).toBe(lots.length);
      expect(stored.heldMs).toHaveLength(Math.ceil(lots.length / 2));
      expect(keys).toEqual(lots.map((lot) => [lot.auction, lot.lot_id]));
      // Written through the other connection, read here: committed.
      const repos = createRepositories(db);
      for (const lot of lots) expect((await repos.lots.findByVin(lot.vin)).map((found) => found.lot_id)).toContain(lot.lot_id);
      const history = await repos.lotHistory.historyOf({ auction: lots[0]!.auction, lotId: lots[0]!.lot_id });
      expect(history?.firstSource).toBe('test-feed');
    } finally {
      await db.close();
    }
  });

  it('refuses what is not lot data before anything is stored', async () => {
    const db = await freshDb(dir, 'refused.sqlite');
    try {
      const refused = storeFileInWorker({ file: fixture('copart/bot-wall.csv'), format: 'copart-csv', batchSize: 250, source: 'test-feed', writer: db.dialect.bulkWriter()!, photoArchive: false });
      await expect(refused).rejects.toBeInstanceOf(IngestError);
      expect(await createRepositories(db).lots.count()).toBe(0);
    } finally {
      await db.close();
    }
  });

  it('stops between batches when asked, keeping what it stored', async () => {
    const db = await freshDb(dir, 'stopped.sqlite');
    try {
      const stop = new AbortController();
      stop.abort();
      const stored = await storeFileInWorker(
        { file: fixture('copart/salesdata-59-quirks.csv'), format: 'auto', batchSize: 1, source: 'test-feed', writer: db.dialect.bulkWriter()!, photoArchive: false },
        { signal: stop.signal },
      );
      expect(stored.failure?.kind).toBe('interrupted');
      expect(await createRepositories(db).lots.count()).toBe(stored.summary.inserted);
    } finally {
      await db.close();
    }
  });

  // A search's commit writes the searches file alone and does not enter the gate (storage's
  // searches-file.ts): what slices a batch is the server's other writes to the main file, which do.
  it("commits the server's writes between two slices of one batch while they come, searches commit meanwhile, and every lot is stored once", async () => {
    const db = await freshDb(dir, 'sliced.sqlite');
    try {
      const file = path.join(dir, 'sliced.ndjson');
      const lots = [...generateLots({ count: 1000, seed: 3 })];
      writeFileSync(file, lots.map((lot) => JSON.stringify(lot)).join('\n') + '\n');
      const total = new Set(lots.map((lot) => `${lot.auction}/${lot.lot_id}`)).size;
      const repos = createRepositories(db);
      const customer = await createCustomer(repos);
      const now = new Date();
      const principal = await principalAt(repos, customer.tokenId, now);
      const transactions: number[] = [];
      let pulling = true;
      // One batch for the whole file: without slices its lots would appear all at once. Slices for as
      // long as searches came in the last minute: a loaded machine may hold this loop for long.
      const slices = { ...slicePolicy(0.5), quietMs: 60_000 };
      const pull = storeFileInWorker(
        { file, format: 'ndjson', batchSize: lots.length, source: 'test-feed', writer: db.dialect.bulkWriter()!, photoArchive: false, slices },
        { onStored: (keys) => transactions.push(keys.length) },
      ).finally(() => (pulling = false));
      // Writes of the server's connection to the main file one after the other meanwhile (each enters
      // the gate with priority); one that found some of the batch's lots stored before it and not
      // all of them after it committed between two slices of the batch. A search commits beside each.
      let between = 0;
      while (pulling) {
        const before = await repos.lots.count();
        await sql`update accounts set created_at = created_at where id = ${customer.accountId}`.execute(db.kysely);
        const after = await repos.lots.count();
        if (before > 0 && after < total) between++;
        const committed = await repos.searchCommit.commit({ principal, accountId: customer.accountId, tokenId: customer.tokenId, vin: randomVin(), now, periodStart: now.toISOString(), quota: 1_000_000, lots: [], idempotencyKey: null });
        expect(committed.kind).toBe('committed');
      }
      const stored = await pull;
      expect(stored.failure).toBeNull();
      expect(between).toBeGreaterThan(0);
      expect(transactions.length).toBeGreaterThan(1);
      expect(transactions.reduce((a, b) => a + b, 0)).toBe(lots.length);
      expect(stored.heldMs).toHaveLength(transactions.length);
      expect(stored.summary.inserted).toBe(total);
      expect(await repos.lots.count()).toBe(total);
      // As the same file stored in one transaction: each line written once, the same versions.
      const whole = await freshDb(dir, 'whole.sqlite');
      try {
        const once = await storeFileInWorker({ file, format: 'ndjson', batchSize: lots.length, source: 'test-feed', writer: whole.dialect.bulkWriter()!, photoArchive: false });
        expect(once.heldMs).toHaveLength(1);
        expect(stored.summary).toEqual(once.summary);
        const counts = async (of: Db) => ({
          lots: await createRepositories(of).lots.count(),
          versions: Number((await of.kysely.selectFrom('lot_versions').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n),
        });
        expect(await counts(db)).toEqual(await counts(whole));
      } finally {
        await whole.close();
      }
    } finally {
      await db.close();
    }
  });
});
