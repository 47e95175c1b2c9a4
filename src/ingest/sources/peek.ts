import { pipeline, Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';

export interface Peeked {
  /** The first bytes of the stream (fewer only when the stream is shorter). */
  head: Buffer;
  /** The whole stream again, head included. */
  stream: Readable;
}

/**
 * Reads the first `bytes` of a stream to look at them, and gives back a stream that still yields
 * everything. A read error of the input surfaces from the returned stream, as it would have.
 */
export async function peek(input: Readable, bytes: number): Promise<Peeked> {
  const iterator = input[Symbol.asyncIterator]() as AsyncIterator<Buffer | string>;
  const chunks: Buffer[] = [];
  let length = 0;
  let done = false;
  while (length < bytes) {
    const next = await iterator.next();
    if (next.done) {
      done = true;
      break;
    }
    const chunk = typeof next.value === 'string' ? Buffer.from(next.value) : next.value;
    chunks.push(chunk);
    length += chunk.length;
  }
  const head = Buffer.concat(chunks);
  async function* replay(): AsyncGenerator<Buffer> {
    try {
      if (head.length > 0) yield head;
      while (!done) {
        const next = await iterator.next();
        if (next.done) return;
        yield typeof next.value === 'string' ? Buffer.from(next.value) : next.value;
      }
    } finally {
      // Stopping early (a refused file, Ctrl-C) must release the file as well.
      if (!done) await iterator.return?.();
    }
  }
  return { head: head.subarray(0, bytes), stream: Readable.from(replay(), { objectMode: false }) };
}

const GZIP_MAGIC = [0x1f, 0x8b];

/** Decompresses a gzip stream, recognised by its first two bytes rather than by a file name. */
export async function gunzipIfCompressed(input: Readable): Promise<{ stream: Readable; compressed: boolean }> {
  const { head, stream } = await peek(input, 2);
  if (head[0] !== GZIP_MAGIC[0] || head[1] !== GZIP_MAGIC[1]) return { stream, compressed: false };
  // pipeline destroys the gunzip stream with the file's error, so a read error reaches the reader.
  return { stream: pipeline(stream, createGunzip(), () => {}), compressed: true };
}
