import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest, openDatabase } from '../../src/storage/database.ts';
import { createRepositories } from '../../src/storage/repositories/index.ts';
import { lotsWrittenHooks } from '../../src/container.ts';
import { makeLot, validVin } from '../support/fixtures.ts';
import { makeImage, startImageServer, type ImageServer } from '../support/image-server.ts';
import { freePort, makeDataDir, startServe, stopServer } from './run-cli.ts';

describe('vinhistory serve with the photo archive on', () => {
  const data = makeDataDir();
  let photos: ImageServer;
  let jpeg: Buffer;

  beforeAll(async () => {
    photos = await startImageServer();
    jpeg = await makeImage('jpeg', 7, { width: 200, height: 150 });
    photos.set('/served.jpg', jpeg);
  });
  afterAll(async () => {
    await photos.close();
    data.remove();
  });

  it('archives queued photos in the background and serves them; stops cleanly', async () => {
    const db = await openDatabase({ kind: 'sqlite', file: path.join(data.dir, 'vinhistory.sqlite') });
    try {
      await migrateToLatest(db);
      await createRepositories(db, { lotsWritten: lotsWrittenHooks({ photoArchive: true }) }).lots.upsertBatch([
        makeLot({ vin: validVin('1HGCM82633A00601'), lot_id: 601, images: [`${photos.base}/served.jpg`] }),
      ]);
    } finally {
      await db.close();
    }
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const child = startServe(data.dir, {
      PORT: String(port),
      HOST: '127.0.0.1',
      NODE_ENV: 'production',
      PUBLIC_BASE_URL: base,
      MEDIA_ARCHIVE: 'directory',
      OUTBOUND_ALLOW_PRIVATE: 'true',
    });
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    try {
      const reader = await openDatabase({ kind: 'sqlite', file: path.join(data.dir, 'vinhistory.sqlite') });
      let hash: string | null = null;
      try {
        const deadline = Date.now() + 40_000;
        while (hash === null && Date.now() < deadline) {
          const row = await reader.kysely.selectFrom('media_images').select(['state', 'hash']).executeTakeFirst();
          if (row?.state === 'archived') hash = row.hash;
          else await new Promise((resolve) => setTimeout(resolve, 200));
        }
      } finally {
        await reader.close();
      }
      expect(hash, output).toMatch(/^[0-9a-f]{64}$/);
      const file = await fetch(`${base}/media/${hash}.jpg`);
      expect(file.status).toBe(200);
      expect(Buffer.from(await file.arrayBuffer()).equals(jpeg)).toBe(true);
    } finally {
      await stopServer(child);
    }
    expect(child.exitCode, output).toBe(0);
  }, 90_000);
});
