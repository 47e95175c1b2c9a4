import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createContainer, type Container } from '../../src/container.ts';
import { migrateToLatest, openDatabase, type Db } from '../../src/storage/database.ts';
import { MemoryRateLimiter } from '../../src/limits/rate/memory-rate-limiter.ts';
import { testConfig } from '../support/app.ts';
import { newTestSchemaName } from '../support/databases.ts';
import { TEST_POSTGRES_URL } from '../support/env.ts';
import { makeLot, validVin } from '../support/fixtures.ts';
import { makeImage, startImageServer, type ImageServer } from '../support/image-server.ts';

/**
 * Three instances on one PostgreSQL database archive one queue at once: the claims (FOR UPDATE
 * SKIP LOCKED and a lease) give every photo to exactly one of them.
 */
describe.runIf(TEST_POSTGRES_URL)('three archivers on PostgreSQL share the queue', () => {
  const PHOTOS = 60;
  let server: ImageServer;
  let dir: string;
  const dbs: Db[] = [];
  const instances: Container[] = [];

  beforeAll(async () => {
    server = await startImageServer({ delayMs: 20 });
    dir = mkdtempSync(path.join(tmpdir(), 'vinhistory-media-shared-'));
    const schema = newTestSchemaName();
    const config = testConfig({ MEDIA_ARCHIVE: 'directory', MEDIA_DIR: dir, OUTBOUND_ALLOW_PRIVATE: 'true', MEDIA_CONCURRENCY: '4', MEDIA_HOST_CONCURRENCY: '4' });
    for (let i = 0; i < 3; i++) {
      const db = await openDatabase({ kind: 'postgres', url: TEST_POSTGRES_URL! }, { schema, maxConnections: 4 });
      if (i === 0) await migrateToLatest(db);
      dbs.push(db);
      instances.push(createContainer({ config, db, log: pino({ level: 'silent' }), rateLimiter: new MemoryRateLimiter() }));
    }
    const lots = [];
    for (let lot = 0; lot < PHOTOS / 6; lot++) {
      const images: string[] = [];
      for (let i = 0; i < 6; i++) {
        const name = `/lot${lot}-${i}.jpg`;
        server.set(name, await makeImage('jpeg', lot * 6 + i, { width: 64, height: 48 }));
        images.push(`${server.base}${name}`);
      }
      lots.push(makeLot({ vin: validVin(`1HGCM82633A0${String(lot).padStart(4, '0')}`), lot_id: 1000 + lot, images }));
    }
    await instances[0]!.ingest.importRecords(
      (async function* () {
        for (const [index, lot] of lots.entries()) yield { line: index + 1, raw: lot };
      })(),
    );
  });

  afterAll(async () => {
    for (const instance of instances) await instance.close();
    for (const db of dbs) await db.close();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('archives every photo once, each fetched by one instance', async () => {
    expect(await instances[0]!.media.status()).toMatchObject({ queued: PHOTOS });
    const archivers = instances.map((instance) => instance.media.createArchiver({ idleMs: 10 })!);
    const totals = await Promise.all(archivers.map((archiver) => archiver.drain()));
    expect(totals.reduce((sum, t) => sum + t.archived, 0)).toBe(PHOTOS);
    expect(totals.every((t) => t.failed === 0)).toBe(true);
    // Every instance took a share.
    for (const t of totals) expect(t.archived).toBeGreaterThan(0);
    expect(server.hits.size).toBe(PHOTOS);
    expect([...server.hits.values()].every((n) => n === 1)).toBe(true);
    expect(await instances[1]!.media.status()).toMatchObject({ queued: 0, archived: PHOTOS, objects: PHOTOS });
  }, 60_000);
});
