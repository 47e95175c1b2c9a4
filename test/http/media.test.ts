import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.ts';
import { parseRange } from '../../src/http/media.ts';
import { DirectoryStore } from '../../src/media/stores/directory-store.ts';
import { MemoryRateLimiter } from '../../src/limits/rate/memory-rate-limiter.ts';
import { buildAppOn, testConfig } from '../support/app.ts';
import { createTestDatabase, type TestDatabase } from '../support/databases.ts';

describe('parseRange', () => {
  it.each([
    ['bytes=0-99', { kind: 'range', range: { start: 0, end: 99 } }],
    ['bytes=100-', { kind: 'range', range: { start: 100, end: 999 } }],
    ['bytes=-10', { kind: 'range', range: { start: 990, end: 999 } }],
    ['bytes=-5000', { kind: 'range', range: { start: 0, end: 999 } }],
    ['bytes=900-5000', { kind: 'range', range: { start: 900, end: 999 } }],
    ['bytes=1000-', { kind: 'unsatisfiable' }],
    ['bytes=-0', { kind: 'unsatisfiable' }],
    ['bytes=0-1,5-6', { kind: 'whole' }],
    ['items=0-1', { kind: 'whole' }],
    ['bytes=5-1', { kind: 'whole' }],
  ])('%s of 1000 bytes', (header, expected) => {
    expect(parseRange(header, 1000)).toEqual(expected);
  });
});

describe('GET /media/<name>', () => {
  let database: TestDatabase;
  let app: App;
  let dir: string;
  const bytes = randomBytes(5_000);
  const hash = createHash('sha256').update(bytes).digest('hex');

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'vinhistory-media-route-'));
    await new DirectoryStore(dir).put(`${hash}.jpg`, bytes);
    await new DirectoryStore(dir).put(`${hash}-thumb.webp`, bytes.subarray(0, 100));
    database = await createTestDatabase('sqlite');
    app = await buildAppOn({ config: testConfig({ MEDIA_ARCHIVE: 'directory', MEDIA_DIR: dir }), db: database.db, rateLimiter: new MemoryRateLimiter() });
    await app.ready();
  });
  afterAll(async () => {
    await app.close();
    await database.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves the file with its type, an immutable cache, a strong ETag and its length', async () => {
    const answer = await app.inject({ method: 'GET', url: `/media/${hash}.jpg` });
    expect(answer.statusCode).toBe(200);
    expect(answer.rawPayload.equals(bytes)).toBe(true);
    expect(answer.headers).toMatchObject({
      'content-type': 'image/jpeg',
      'content-length': '5000',
      'cache-control': 'public, max-age=31536000, immutable',
      etag: `"${hash}"`,
      'accept-ranges': 'bytes',
      'cross-origin-resource-policy': 'cross-origin',
      'x-content-type-options': 'nosniff',
    });
    const thumb = await app.inject({ method: 'GET', url: `/media/${hash}-thumb.webp` });
    expect(thumb.headers['content-type']).toBe('image/webp');
    expect(thumb.headers.etag).toBe(`"${hash}-thumb"`);
  });

  it('answers 304 to its ETag, 206 to a range, 416 past the end, and HEAD without a body', async () => {
    const cached = await app.inject({ method: 'GET', url: `/media/${hash}.jpg`, headers: { 'if-none-match': `W/"${hash}"` } });
    expect(cached.statusCode).toBe(304);
    expect(cached.body).toBe('');

    const part = await app.inject({ method: 'GET', url: `/media/${hash}.jpg`, headers: { range: 'bytes=10-19' } });
    expect(part.statusCode).toBe(206);
    expect(part.headers['content-range']).toBe('bytes 10-19/5000');
    expect(part.headers['content-length']).toBe('10');
    expect(part.rawPayload.equals(bytes.subarray(10, 20))).toBe(true);

    // If-Range with another validator: the whole file.
    const stale = await app.inject({ method: 'GET', url: `/media/${hash}.jpg`, headers: { range: 'bytes=10-19', 'if-range': '"other"' } });
    expect(stale.statusCode).toBe(200);
    expect(stale.rawPayload.length).toBe(5000);

    const past = await app.inject({ method: 'GET', url: `/media/${hash}.jpg`, headers: { range: 'bytes=5000-' } });
    expect(past.statusCode).toBe(416);
    expect(past.headers['content-range']).toBe('bytes */5000');

    const head = await app.inject({ method: 'HEAD', url: `/media/${hash}.jpg` });
    expect(head.statusCode).toBe(200);
    expect(head.headers['content-length']).toBe('5000');
    expect(head.body).toBe('');
  });

  it('answers 404 for a name it does not hold or that is not a media name, never a path', async () => {
    for (const name of [`${'0'.repeat(64)}.jpg`, `${hash}.png`, `${hash}-thumb.jpg`, `${hash}-huge.webp`, '..%2F..%2Fetc%2Fpasswd', `${hash}.JPG`]) {
      const answer = await app.inject({ method: 'GET', url: `/media/${name}` });
      expect(answer.statusCode, name).toBe(404);
      expect(answer.headers['cache-control'], name).toBe('no-store');
    }
    expect((await app.inject({ method: 'GET', url: `/media/${'a'.repeat(300)}.jpg` })).statusCode).toBe(414);
    const unknownEtag = await app.inject({ method: 'GET', url: `/media/${'0'.repeat(64)}.jpg`, headers: { 'if-none-match': `"${'0'.repeat(64)}"` } });
    expect(unknownEtag.statusCode).toBe(404);
  });

  it('answers 404 with the archive off', async () => {
    const off = await buildAppOn({ config: testConfig(), db: database.db, rateLimiter: new MemoryRateLimiter() });
    try {
      expect((await off.inject({ method: 'GET', url: `/media/${hash}.jpg` })).statusCode).toBe(404);
    } finally {
      await off.close();
    }
  });
});
