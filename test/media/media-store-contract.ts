import { createHash, randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MediaStore } from '../../src/media/media-store.ts';

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks);
}

const keyFor = (bytes: Buffer, suffix = '.jpg') => `${createHash('sha256').update(bytes).digest('hex')}${suffix}`;

/**
 * What every MediaStore promises (src/media/media-store.ts), run against each implementation: the
 * directory and a real S3-protocol server on 127.0.0.1.
 */
export function mediaStoreContract(name: string, open: () => Promise<{ store: MediaStore; close: () => Promise<void> }>): void {
  describe(`MediaStore contract: ${name}`, () => {
    let store: MediaStore;
    let close: () => Promise<void>;

    beforeAll(async () => {
      ({ store, close } = await open());
    });
    afterAll(async () => {
      await store.close();
      await close();
    });

    it('gives back exactly the bytes put, with their size', async () => {
      const bytes = randomBytes(200_000);
      const key = keyFor(bytes);
      await store.put(key, bytes, 'image/jpeg');
      expect(await store.stat(key)).toEqual({ size: bytes.length });
      const got = await store.get(key);
      expect(got?.size).toBe(bytes.length);
      expect((await readAll(got!.body)).equals(bytes)).toBe(true);
    });

    it('gives a range, both ends included, with the whole size', async () => {
      const bytes = randomBytes(10_000);
      const key = keyFor(bytes, '-thumb.webp');
      await store.put(key, bytes, 'image/webp');
      const got = await store.get(key, { start: 100, end: 1099 });
      expect(got?.size).toBe(10_000);
      expect((await readAll(got!.body)).equals(bytes.subarray(100, 1100))).toBe(true);
      const tail = await store.get(key, { start: 9_990, end: 9_999 });
      expect((await readAll(tail!.body)).equals(bytes.subarray(9_990))).toBe(true);
    });

    it('answers null for a missing object, and deletes (twice without error)', async () => {
      const bytes = randomBytes(100);
      const key = keyFor(bytes, '.png');
      expect(await store.stat(key)).toBeNull();
      expect(await store.get(key)).toBeNull();
      await store.put(key, bytes, 'image/png');
      await store.delete(key);
      await store.delete(key);
      expect(await store.stat(key)).toBeNull();
      expect(await store.get(key)).toBeNull();
    });

    it('overwrites a key with the same bytes (two archivers storing one photo)', async () => {
      const bytes = randomBytes(5_000);
      const key = keyFor(bytes);
      await Promise.all([store.put(key, bytes, 'image/jpeg'), store.put(key, bytes, 'image/jpeg')]);
      expect((await readAll((await store.get(key))!.body)).equals(bytes)).toBe(true);
    });

    it('refuses a key that is not a media name (no path can be named)', async () => {
      for (const key of ['x/../../etc/passwd', 'a/b.jpg', `${'a'.repeat(64)}.jpg/../x`, '', 'ABC.jpg']) {
        await expect(store.put(key, Buffer.from('x'), 'image/jpeg'), key).rejects.toThrow(/not a media key/);
        await expect(store.get(key), key).rejects.toThrow(/not a media key/);
      }
    });
  });
}
