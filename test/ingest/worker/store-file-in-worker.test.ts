import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { IngestError } from '../../../src/ingest/ingest-error.ts';
import { storeFileInWorker } from '../../../src/ingest/worker/store-file-in-worker.ts';
import { migrateToLatest, openDatabase, type Db } from '../../../src/storage/database.ts';
import { createRepositories } from '../../../src/storage/repositories/index.ts';
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
});
