import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import sharp from 'sharp';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.ts';
import type { Lot } from '../../src/domain/lot.ts';
import { DEFAULT_RETRY } from '../../src/media/archiver.ts';
import { ImageProcess } from '../../src/media/image-process.ts';
import { MemoryRateLimiter } from '../../src/limits/rate/memory-rate-limiter.ts';
import { buildAppOn, testConfig, TEST_BASE_URL } from '../support/app.ts';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../support/databases.ts';
import { createCustomer, makeLot, validVin } from '../support/fixtures.ts';
import { makeImage, startImageServer, type ImageServer } from '../support/image-server.ts';
import { CRASH, HANG } from './misbehaving-image-worker.ts';

const MEDIA = `${TEST_BASE_URL}/media/`;
const ndjson = (lots: Lot[]) => Readable.from([lots.map((lot) => JSON.stringify(lot)).join('\n')]);

describe.each(DIALECTS)('photo archive on %s', (dialect) => {
  let server: ImageServer;
  let jpeg: Buffer;
  let png: Buffer;
  let webp: Buffer;

  beforeAll(async () => {
    server = await startImageServer();
    [jpeg, png, webp] = await Promise.all([makeImage('jpeg', 1), makeImage('png', 2), makeImage('webp', 3)]);
    server.set('/photo.jpg', jpeg, 'image/jpeg');
    server.set('/photo.png', png, 'image/png');
    // A WebP served as JPEG: the bytes say what it is, not the header.
    server.set('/photo.webp', webp, 'image/jpeg');
    server.set('/copy-of-photo.jpg', jpeg, 'image/jpeg');
  });
  afterAll(() => server.close());

  let database: TestDatabase;
  let app: App;
  let dir: string;

  async function start(env: Record<string, string> = {}) {
    app = await buildAppOn({
      // MEDIA_IMAGE_SHARE=1: no rest after each photo's image work (the product's 0.5 rests as long
      // as the work took); the share itself is image-process.test.ts's to hold.
      config: testConfig({ MEDIA_ARCHIVE: 'directory', MEDIA_DIR: dir, OUTBOUND_ALLOW_PRIVATE: 'true', MEDIA_MAX_BYTES: '1000000', MEDIA_IMAGE_SHARE: '1', ...env }),
      db: database.db,
      rateLimiter: new MemoryRateLimiter(),
    });
    await app.ready();
  }

  beforeEach(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'vinhistory-media-'));
    database = await createTestDatabase(dialect);
    await start();
  });
  afterEach(async () => {
    await app.close();
    await database.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  const archiver = (overrides: Parameters<App['services']['media']['createArchiver']>[0] = {}) =>
    app.services.media.createArchiver({ idleMs: 10, fetchTimeoutMs: 1_000, ...overrides })!;

  it('queues a lot\'s photos when it is stored, archives them once, and the API lists the copies in order', async () => {
    const vin = validVin('4JGBF7BE5AA58553');
    const images = [`${server.base}/photo.png`, `${server.base}/photo.jpg`, `${server.base}/photo.webp`, `${server.base}/missing.jpg`];
    await app.services.ingest.importUpload(ndjson([makeLot({ vin, lot_id: 11, images })]), {});
    // Storing the lot again queues nothing new.
    await app.services.ingest.importUpload(ndjson([makeLot({ vin, lot_id: 11, images })]), {});
    expect(await app.services.media.status()).toMatchObject({ queued: 4, archived: 0 });

    const totals = await archiver().drain();
    expect(totals).toMatchObject({ archived: 3, deduplicated: 0, failed: 1 });
    for (const name of ['/photo.png', '/photo.jpg', '/photo.webp']) expect(server.hits.get(name), name).toBe(1);

    const customer = await createCustomer(database.repos);
    const answer = await app.inject({ method: 'GET', url: `/api/v1/search?vin=${vin}`, headers: { authorization: customer.token } });
    expect(answer.statusCode).toBe(200);
    const served: string[] = answer.json().lots[0].images;
    expect(served).toHaveLength(4);
    expect(served[0]).toMatch(new RegExp(`^${MEDIA}[0-9a-f]{64}\\.png$`));
    expect(served[1]).toMatch(new RegExp(`^${MEDIA}[0-9a-f]{64}\\.jpg$`));
    expect(served[2]).toMatch(new RegExp(`^${MEDIA}[0-9a-f]{64}\\.webp$`));
    // The 404 keeps its original URL, in its place.
    expect(served[3]).toBe(images[3]);

    // Served back byte for byte, with the type of the bytes.
    for (const [url, bytes, type] of [[served[0]!, png, 'image/png'], [served[1]!, jpeg, 'image/jpeg'], [served[2]!, webp, 'image/webp']] as const) {
      const file = await app.inject({ method: 'GET', url: url.slice(TEST_BASE_URL.length) });
      expect(file.statusCode).toBe(200);
      expect(file.headers['content-type']).toBe(type);
      expect(file.rawPayload.equals(bytes)).toBe(true);
    }

    // Thumbnails and display sizes are made, as WebP, never larger than their box.
    const thumb = await app.inject({ method: 'GET', url: served[1]!.slice(TEST_BASE_URL.length).replace('.jpg', '-thumb.webp') });
    expect(thumb.statusCode).toBe(200);
    const thumbMeta = await sharp(thumb.rawPayload).metadata();
    expect(thumbMeta).toMatchObject({ format: 'webp', width: 320, height: 240 });
    const display = await app.inject({ method: 'GET', url: served[1]!.slice(TEST_BASE_URL.length).replace('.jpg', '-display.webp') });
    expect(await sharp(display.rawPayload).metadata()).toMatchObject({ format: 'webp', width: 640, height: 480 });

    const status = await app.services.media.status();
    expect(status).toMatchObject({ queued: 0, retrying: 1, archived: 3, failed: 0, objects: 3 });
    expect(status.bytes).toBeGreaterThan(jpeg.length + png.length + webp.length);
    expect(status.hosts).toEqual([expect.objectContaining({ host: '127.0.0.1', archived: 3, retrying: 1 })]);
    expect(status.recentErrors).toEqual([{ url: images[3], error: 'HTTP 404', attempts: 1 }]);

    const metrics = await app.services.metrics.registry.metrics();
    expect(metrics).toContain('vinhistory_media_fetches_total{outcome="archived"} 3');
    expect(metrics).toContain('vinhistory_media_fetches_total{outcome="failed"} 1');
    expect(metrics).toContain('vinhistory_media_failures_total{reason="http"} 1');
    expect(metrics).toContain('vinhistory_media_served_total{status="200"} 5');
    expect(metrics).toContain('vinhistory_media_in_flight 0');
  });

  it('stores one content once, whichever URLs show it', async () => {
    const lots = [
      makeLot({ vin: validVin('1HGCM82633A00401'), lot_id: 21, images: [`${server.base}/photo.jpg`] }),
      makeLot({ vin: validVin('1HGCM82633A00402'), lot_id: 22, images: [`${server.base}/copy-of-photo.jpg`] }),
    ];
    await app.services.ingest.importUpload(ndjson(lots), {});
    const totals = await archiver({ concurrency: 1 }).drain();
    expect(totals).toMatchObject({ archived: 1, deduplicated: 1, failed: 0 });
    expect(await app.services.media.status()).toMatchObject({ archived: 2, objects: 1 });
  });

  it('checks the bytes, not the header, bounds size and time, and retries failures with a growing pause', async () => {
    server.set('/flaky.jpg', await makeImage('jpeg', 9), 'image/jpeg');
    server.fail('/flaky.jpg', 503, 1);
    const urls = ['/html.jpg', '/huge.jpg', '/slow/a.jpg', '/flaky.jpg'].map((p) => `${server.base}${p}`);
    await app.services.ingest.importUpload(ndjson([makeLot({ vin: validVin('1HGCM82633A00403'), lot_id: 31, images: urls })]), {});
    // The archiver's clock, from just after the lot was queued.
    let now = new Date(Date.now() + 1_000);
    const run = () => archiver({ now: () => now }).drain();

    // Failed attempts, none given up yet: `media archive` says "retrying 4, failed 0", as `media status` does.
    expect(await run()).toMatchObject({ archived: 0, failed: 4, givenUp: 0 });
    const errors = new Map((await app.services.media.status()).recentErrors.map((e) => [e.url.slice(server.base.length), e.error]));
    expect(errors.get('/html.jpg')).toMatch(/not an image/);
    expect(errors.get('/huge.jpg')).toMatch(/larger than 1000000 bytes/);
    expect(errors.get('/slow/a.jpg')).toMatch(/no complete answer in time/);
    expect(errors.get('/flaky.jpg')).toBe('HTTP 503');

    // Nothing is due before the first pause has passed.
    now = new Date(now.getTime() + DEFAULT_RETRY.baseDelayMs - 1);
    expect(await run()).toMatchObject({ archived: 0, failed: 0 });
    now = new Date(now.getTime() + 1);
    expect(await run()).toMatchObject({ archived: 1, failed: 3 });
    // The second pause is four times the first.
    now = new Date(now.getTime() + DEFAULT_RETRY.baseDelayMs * 4 - 1);
    expect(await run()).toMatchObject({ failed: 0 });
    now = new Date(now.getTime() + 1);
    expect(await run()).toMatchObject({ failed: 3 });

    // After every attempt failed an image is given up (reported as failed), and tried again on request.
    let givenUp = 0;
    for (let i = 0; i < DEFAULT_RETRY.maxAttempts; i++) {
      now = new Date(now.getTime() + DEFAULT_RETRY.maxDelayMs);
      givenUp += (await run()).givenUp;
    }
    expect(givenUp).toBe(3);
    expect(await app.services.media.status()).toMatchObject({ archived: 1, failed: 3, retrying: 0 });
    expect(await app.services.media.retryFailed()).toBe(3);
    expect(await app.services.media.status()).toMatchObject({ queued: 3, failed: 0 });
  }, 30_000);

  it('a photo that crashes or hangs the image process is retried later; the photos around it are archived', async () => {
    const crash = Buffer.concat([await makeImage('jpeg', 10), CRASH]);
    const hang = Buffer.concat([await makeImage('jpeg', 11), HANG]);
    server.set('/crash.jpg', crash, 'image/jpeg');
    server.set('/hang.jpg', hang, 'image/jpeg');
    const urls = ['/photo.jpg', '/crash.jpg', '/hang.jpg', '/photo.png'].map((p) => `${server.base}${p}`);
    await app.services.ingest.importUpload(ndjson([makeLot({ vin: validVin('1HGCM82633A00411'), lot_id: 35, images: urls })]), {});
    const images = new ImageProcess({ setup: app.services.media.imageSetup()!, module: new URL('./misbehaving-image-worker.ts', import.meta.url), jobTimeoutMs: 1_500 });
    expect(await archiver({ images, concurrency: 1 }).drain()).toMatchObject({ archived: 2, failed: 2 });
    const status = await app.services.media.status();
    expect(status).toMatchObject({ archived: 2, retrying: 2 });
    const errors = new Map(status.recentErrors.map((e) => [e.url.slice(server.base.length), e.error]));
    expect(errors.get('/crash.jpg')).toBe('the image process stopped while working on the photo (exit code 3)');
    expect(errors.get('/hang.jpg')).toBe('the image process took longer than 1.5 s over the photo');
    const metrics = await app.services.metrics.registry.metrics();
    expect(metrics).toContain('vinhistory_media_failures_total{reason="not_image"} 1');
    expect(metrics).toContain('vinhistory_media_failures_total{reason="timeout"} 1');
    // The drain closed its image process: nothing is left running.
    expect(images.pid).toBeUndefined();
  });

  it('the photos being fetched when the image process crashes over another are given back, not failed, and archived after', async () => {
    const slowServer = await startImageServer({ delayMs: 1_000 });
    try {
      server.set('/crash-alone.jpg', Buffer.concat([await makeImage('jpeg', 12), CRASH]), 'image/jpeg');
      slowServer.set('/innocent.jpg', await makeImage('jpeg', 13), 'image/jpeg');
      const urls = [`${server.base}/crash-alone.jpg`, `${slowServer.base}/innocent.jpg`];
      await app.services.ingest.importUpload(ndjson([makeLot({ vin: validVin('1HGCM82633A00413'), lot_id: 37, images: urls })]), {});
      const images = new ImageProcess({ setup: app.services.media.imageSetup()!, module: new URL('./misbehaving-image-worker.ts', import.meta.url) });
      // No pacing: the crash must come while the other photo is still being fetched.
      expect(await archiver({ images, concurrency: 2, pacing: false, fetchTimeoutMs: 5_000 }).drain()).toMatchObject({ archived: 1, failed: 1 });
      // Fetched twice: its first bytes died with the child.
      expect(slowServer.hits.get('/innocent.jpg')).toBe(2);
      const status = await app.services.media.status();
      expect(status).toMatchObject({ archived: 1, retrying: 1 });
      expect(status.recentErrors.map((e) => e.url)).toEqual([urls[0]]);
    } finally {
      await slowServer.close();
    }
  });

  it('a running archiver starts its image process at once, before any photo, and stop() ends it', async () => {
    const images = new ImageProcess({ setup: app.services.media.imageSetup()! });
    const running = archiver({ images });
    running.start();
    expect(images.pid).toBeDefined();
    await app.services.ingest.importUpload(ndjson([makeLot({ vin: validVin('1HGCM82633A00412'), lot_id: 36, images: [`${server.base}/photo.png`] })]), {});
    for (let i = 0; i < 200 && (await app.services.media.status()).archived === 0; i++) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await app.services.media.status()).toMatchObject({ archived: 1 });
    const pid = images.pid!;
    await running.stop();
    expect(images.pid).toBeUndefined();
    expect(() => process.kill(pid, 0)).toThrow();
  });

  it('keeps a lot\'s order and the per-host bound while fetching several at once', async () => {
    const slowServer = await startImageServer({ delayMs: 50 });
    try {
      const images: string[] = [];
      for (let i = 0; i < 12; i++) {
        slowServer.set(`/p${i}.jpg`, await makeImage('jpeg', 100 + i, { width: 64, height: 48 }));
        images.push(`${slowServer.base}/p${i}.jpg`);
      }
      await app.services.ingest.importUpload(ndjson([makeLot({ vin: validVin('1HGCM82633A00404'), lot_id: 41, images })]), {});
      const totals = await archiver({ concurrency: 8, hostConcurrency: 2 }).drain();
      expect(totals.archived).toBe(12);
      expect(slowServer.peakConcurrent()).toBe(2);
      // Started in the lot's order, two at a time.
      expect(slowServer.order).toEqual(images.map((url) => new URL(url).pathname));
    } finally {
      await slowServer.close();
    }
  });

  it('the report page shows thumbnails of photos archived after its snapshot, opening the full image', async () => {
    const vin = validVin('1HGCM82633A00405');
    const images = [`${server.base}/photo.jpg`, `${server.base}/missing.jpg`];
    await app.services.ingest.importUpload(ndjson([makeLot({ vin, lot_id: 51, images })]), {});
    const customer = await createCustomer(database.repos);
    const before = await app.inject({ method: 'GET', url: `/api/v1/search?vin=${vin}`, headers: { authorization: customer.token } });
    expect(before.json().lots[0].images).toEqual(images);
    const reportPath = new URL(before.json().report_url).pathname;

    await archiver().drain();
    const page = await app.inject({ method: 'GET', url: reportPath });
    expect(page.statusCode).toBe(200);
    const thumb = /<a href="([^"]+)"[^>]*><img src="([^"]+)"/.exec(page.body)!;
    expect(thumb[1]).toMatch(new RegExp(`^${MEDIA}[0-9a-f]{64}\\.jpg$`));
    expect(thumb[2]).toBe(thumb[1]!.replace('.jpg', '-thumb.webp'));
    expect(page.body).toContain(`<a href="${images[1]}"`);

    // A search made after archiving stored the copies' URLs: the page shows their thumbnails too.
    const after = await app.inject({ method: 'GET', url: `/api/v1/search?vin=${vin}`, headers: { authorization: customer.token } });
    const afterPage = await app.inject({ method: 'GET', url: new URL(after.json().report_url).pathname });
    expect(afterPage.body).toContain(`<img src="${thumb[2]}"`);
  });

  it('deletes a lot\'s photos for good, keeping contents other lots still show', async () => {
    const shared = `${server.base}/photo.jpg`;
    const own = `${server.base}/photo.png`;
    await app.services.ingest.importUpload(
      ndjson([
        makeLot({ vin: validVin('1HGCM82633A00406'), lot_id: 61, images: [own, shared] }),
        makeLot({ vin: validVin('1HGCM82633A00407'), lot_id: 62, images: [`${server.base}/copy-of-photo.jpg`] }),
      ]),
      {},
    );
    await archiver().drain();
    expect(await app.services.media.removeLot('copart', 61)).toEqual({ kind: 'removed', images: 2, filesDeleted: 3 });
    expect(await app.services.media.status()).toMatchObject({ archived: 1, removed: 2, objects: 1 });
    // Imported again, its photos are not queued again.
    await app.services.ingest.importUpload(ndjson([makeLot({ vin: validVin('1HGCM82633A00406'), lot_id: 61, images: [shared, own] })]), {});
    expect(await app.services.media.status()).toMatchObject({ queued: 0, removed: 2 });
    expect(await app.services.media.removeLot('copart', 999)).toEqual({ kind: 'not_found' });
  });

  it('backfills lots stored while the archive was off', async () => {
    await app.close();
    await start({ MEDIA_ARCHIVE: 'off' });
    await app.services.ingest.importUpload(ndjson([makeLot({ vin: validVin('1HGCM82633A00408'), lot_id: 71, images: [`${server.base}/photo.jpg`] })]), {});
    expect(await app.services.media.status()).toMatchObject({ queued: 0, archived: 0 });
    expect(app.services.media.createArchiver()).toBeNull();
    await app.close();
    await start();
    const progress = await app.services.media.backfill({ pageSize: 1 });
    expect(progress).toEqual({ lotsTotal: 1, lotsRead: 1, queued: 1 });
    expect(await archiver().drain()).toMatchObject({ archived: 1 });
  });

  it('holds the outbound rules: with private addresses refused nothing local is fetched, redirects included', async () => {
    await app.close();
    await start({ OUTBOUND_ALLOW_PRIVATE: 'false' });
    const port = new URL(server.base).port;
    const urls = [
      `http://127.0.0.1:${port}/guarded-1.jpg`,
      `http://localhost:${port}/guarded-2.jpg`,
      `http://[::1]:${port}/guarded-3.jpg`,
      `http://169.254.169.254/latest/meta-data`,
    ];
    await app.services.ingest.importUpload(ndjson([makeLot({ vin: validVin('1HGCM82633A00409'), lot_id: 81, images: urls })]), {});
    expect(await archiver().drain()).toMatchObject({ archived: 0, failed: 4 });
    for (const p of ['/guarded-1.jpg', '/guarded-2.jpg', '/guarded-3.jpg']) expect(server.hits.get(p)).toBeUndefined();
    const errors = (await app.services.media.status()).recentErrors.map((e) => e.error);
    expect(errors.every((error) => /not a public address/.test(error))).toBe(true);
  });

  it('checks every redirect hop again, not only the first URL', async () => {
    // allowPrivate lets the archiver reach the test host (no public host exists here); the hop's
    // target is refused by a rule that holds even then (src/outbound/outbound-client.ts).
    await app.close();
    await start({ OUTBOUND_ALLOW_PRIVATE: 'true' });
    const url = `${server.base}/redirect?to=${encodeURIComponent('ftp://127.0.0.1/photo.jpg')}`;
    await app.services.ingest.importUpload(ndjson([makeLot({ vin: validVin('1HGCM82633A00410'), lot_id: 91, images: [url] })]), {});
    expect(await archiver().drain()).toMatchObject({ failed: 1 });
    expect((await app.services.media.status()).recentErrors[0]?.error).toMatch(/only http:\/\/ and https:\/\//);
  });
});
