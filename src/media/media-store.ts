import type { Readable } from 'node:stream';

/** A byte range, both ends included (HTTP's `bytes=start-end`). */
export interface ByteRange {
  readonly start: number;
  readonly end: number;
}

export interface StoredBody {
  /** The whole object's size, whatever part of it `body` streams. */
  readonly size: number;
  readonly body: Readable;
}

/**
 * Where archived photos are kept: a directory on one machine, or an S3-compatible bucket for
 * several instances. Keys are media file names (`<sha256>[-size].<ext>`, domain/media.ts); an
 * object is written once under its content's hash and never changes, so a put of an existing key
 * may simply overwrite it with the same bytes. Both implementations pass one contract suite
 * (test/media/media-store-contract.ts).
 */
export interface MediaStore {
  readonly kind: 'directory' | 's3';
  put(key: string, bytes: Buffer, contentType: string): Promise<void>;
  /** The object's size, or null when there is none. */
  stat(key: string): Promise<{ size: number } | null>;
  /** The object, or the given range of it; null when there is none. The range must lie within it. */
  get(key: string, range?: ByteRange): Promise<StoredBody | null>;
  /** Deletes the object; deleting one that does not exist is not an error. */
  delete(key: string): Promise<void>;
  close(): Promise<void>;
}

const KEY = /^[0-9a-f]{64}(?:-[a-z]{1,16})?\.[a-z0-9]{2,5}$/;

/** Keys come from hashes, never from a request as such; checked anyway so no key can name a path. */
export function assertMediaKey(key: string): void {
  if (!KEY.test(key)) throw new Error(`not a media key: ${JSON.stringify(key.slice(0, 100))}`);
}
