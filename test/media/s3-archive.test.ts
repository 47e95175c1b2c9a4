import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.ts';
import { MemoryRateLimiter } from '../../src/limits/rate/memory-rate-limiter.ts';
import { buildAppOn, testConfig, TEST_BASE_URL } from '../support/app.ts';
import { createTestDatabase, type TestDatabase } from '../support/databases.ts';
import { createCustomer, makeLot, validVin } from '../support/fixtures.ts';
import { makeImage, startImageServer, type ImageServer } from '../support/image-server.ts';
import { startLocalS3, type LocalS3 } from '../support/s3-server.ts';

/** The whole path on the S3 store: queued by an import, archived into the bucket, served back through /media. */
describe('photo archive on an S3 bucket (a local S3-protocol server)', () => {
  let s3: LocalS3;
  let photos: ImageServer;
  let database: TestDatabase;
  let app: App;
  let jpeg: Buffer;

  beforeAll(async () => {
    [s3, photos] = await Promise.all([startLocalS3(), startImageServer()]);
    jpeg = await makeImage('jpeg', 42);
    photos.set('/lot.jpg', jpeg);
    database = await createTestDatabase('sqlite');
    app = await buildAppOn({
      config: testConfig({
        MEDIA_ARCHIVE: 's3',
        S3_BUCKET: s3.bucket,
        S3_ENDPOINT: s3.endpoint,
        S3_ACCESS_KEY_ID: s3.accessKeyId,
        S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
        S3_FORCE_PATH_STYLE: 'true',
        OUTBOUND_ALLOW_PRIVATE: 'true',
      }),
      db: database.db,
      rateLimiter: new MemoryRateLimiter(),
    });
    await app.ready();
  });
  afterAll(async () => {
    await app.close();
    await database.destroy();
    await photos.close();
    await s3.close();
  });

  it('archives into the bucket and serves the copy, its ranges and its thumbnail', async () => {
    const vin = validVin('1HGCM82633A00499');
    await app.services.ingest.importUpload(Readable.from([JSON.stringify(makeLot({ vin, lot_id: 7, images: [`${photos.base}/lot.jpg`] }))]), {});
    expect(await app.services.media.createArchiver({ idleMs: 10 })!.drain()).toMatchObject({ archived: 1, failed: 0 });

    const customer = await createCustomer(database.repos);
    const answer = await app.inject({ method: 'GET', url: `/api/v1/search?vin=${vin}`, headers: { authorization: customer.token } });
    const [url] = answer.json().lots[0].images as string[];
    expect(url).toMatch(/\/media\/[0-9a-f]{64}\.jpg$/);
    const path = url!.slice(TEST_BASE_URL.length);

    const whole = await app.inject({ method: 'GET', url: path });
    expect(whole.statusCode).toBe(200);
    expect(whole.headers['content-type']).toBe('image/jpeg');
    expect(whole.rawPayload.equals(jpeg)).toBe(true);
    const part = await app.inject({ method: 'GET', url: path, headers: { range: 'bytes=-100' } });
    expect(part.statusCode).toBe(206);
    expect(part.headers['content-range']).toBe(`bytes ${jpeg.length - 100}-${jpeg.length - 1}/${jpeg.length}`);
    expect(part.rawPayload.equals(jpeg.subarray(jpeg.length - 100))).toBe(true);
    const thumb = await app.inject({ method: 'GET', url: path.replace('.jpg', '-thumb.webp') });
    expect(thumb.statusCode).toBe(200);
    expect(thumb.headers['content-type']).toBe('image/webp');
    expect((await app.inject({ method: 'GET', url: path.replace('.jpg', '-display.webp').replace(/[0-9a-f]{8}-/, '00000000-') })).statusCode).toBe(404);
  });
});
