import { createHash } from 'node:crypto';
import type { MediaStoreConfig } from '../config.ts';
import { mediaFileName } from '../domain/media.ts';
import { OutboundClient, OutboundError, type OutboundFailure } from '../outbound/outbound-client.ts';
import type { OutboundPolicy } from '../outbound/outbound-policy.ts';
import { checkImage, makeRenditions, type ImageCheck, type Renditions } from './image-check.ts';
import { renderLogo, type LogoRender } from './logo-render.ts';
import type { MediaStore } from './media-store.ts';

/**
 * The child half of the archive's per-photo work (image-process.ts starts it, at a low CPU
 * priority): it fetches a photo through the outbound guard, checks and hashes its bytes, makes its
 * renditions and stores all three files, so that none of the bytes, the decoding or the encoding
 * passes through the server's event loop. The server keeps the queue (claims, per-host bounds,
 * retries) and the database; it sends a photo's URL and gets back a few numbers.
 *
 * Fetches run side by side (they mostly wait; the server bounds how many); the image work of a
 * photo ('process') runs one at a time, because the server sends the next only after the answer.
 * A fetched photo's bytes stay here, under the key the server gave, until it is processed.
 */
export interface ImageSetup {
  /** The outbound rules the server's own client follows (OUTBOUND_ALLOW_PRIVATE). */
  policy: OutboundPolicy;
  store: MediaStoreConfig;
}

export interface FetchRequest {
  url: string;
  timeoutMs: number;
  maxBytes: number;
  maxRedirects: number;
  headers: Record<string, string>;
}

/**
 * What one logo's drawing may take in the child, past which the child kills itself (the parent
 * sees it die and refuses the logo): CPU time of all its threads, and resident memory.
 */
export interface LogoCaps {
  cpuMs: number;
  rssBytes: number;
}

export type ImageJob =
  | { id: number; op: 'setup'; setup: ImageSetup }
  | { id: number; op: 'fetch'; key: string; request: FetchRequest }
  | { id: number; op: 'process'; key: string }
  | { id: number; op: 'logo'; format: 'png' | 'svg'; bytes: Uint8Array; caps: LogoCaps };

/** What a fetch came to: the bytes are held (200), another status, or no answer at all. */
export type FetchAnswer =
  | { kind: 'fetched'; bytes: number }
  | { kind: 'status'; status: number }
  | { kind: 'failed'; failure: OutboundFailure; message: string };

/** What processing a fetched photo came to. */
export type ProcessAnswer =
  /** Not a photo the archive keeps (the check's reason), or sharp could not make its renditions. */
  | { kind: 'not_image'; reason: string }
  /** The store already holds these bytes (another URL brought them): nothing was rendered or written. */
  | { kind: 'present'; check: Extract<ImageCheck, { ok: true }>; hash: string; bytes: number; renditionBytes: number }
  | { kind: 'stored'; check: Extract<ImageCheck, { ok: true }>; hash: string; bytes: number; renditionBytes: number }
  | { kind: 'store_failed'; message: string }
  /** The bytes are not here: the child that fetched them died, and this is a new one. */
  | { kind: 'lost' };

export type ImageAnswer =
  | { id: number; ok: true; fetch: FetchAnswer }
  | { id: number; ok: true; process: ProcessAnswer }
  | { id: number; ok: true; setup: true }
  | { id: number; ok: true; logo: LogoRender }
  | { id: number; ok: false; message: string };

/** The image work proper; tests give one that crashes or hangs on some photos. */
export interface ImageWork {
  check(bytes: Buffer): Promise<ImageCheck>;
  renditions(bytes: Buffer): Promise<Renditions>;
}

export const REAL_IMAGE_WORK: ImageWork = { check: checkImage, renditions: makeRenditions };

async function openStore(config: MediaStoreConfig): Promise<MediaStore> {
  // The S3 SDK is loaded only where it is used: a directory archive's child stays small.
  if (config.kind === 'directory') return new (await import('./stores/directory-store.ts')).DirectoryStore(config.dir);
  return new (await import('./stores/s3-store.ts')).S3Store(config);
}

export class ImageWorker {
  /** Set by the first message; the jobs after it may arrive before the store module is loaded. */
  private setup: Promise<{ client: OutboundClient; store: MediaStore }> | null = null;
  private readonly held = new Map<string, Buffer>();

  constructor(private readonly work: ImageWork = REAL_IMAGE_WORK) {}

  async run(job: ImageJob): Promise<ImageAnswer> {
    try {
      if (job.op === 'setup') {
        const { policy, store } = job.setup;
        this.setup = openStore(store).then((opened) => ({ client: new OutboundClient(policy), store: opened }));
        await this.setup;
        return { id: job.id, ok: true, setup: true };
      }
      if (job.op === 'fetch') return { id: job.id, ok: true, fetch: await this.fetch(job.key, job.request) };
      if (job.op === 'logo') return { id: job.id, ok: true, logo: await this.logo(job) };
      return { id: job.id, ok: true, process: await this.process(job.key) };
    } catch (error) {
      return { id: job.id, ok: false, message: (error as Error).message };
    }
  }

  private configured(): Promise<{ client: OutboundClient; store: MediaStore }> {
    if (!this.setup) throw new Error('the image process was given a photo before its setup');
    return this.setup;
  }

  /**
   * Draws an uploaded logo while watching what it costs: libvips works on its own thread, so this
   * thread stays free to look every 25 ms, and a drawing past its CPU time or memory kills the
   * whole child at once (an SVG bomb keeps librsvg busy in native code, where nothing else can
   * stop it; sharp's own timeout fired after 54 s). One logo at a time: the parent queues them.
   */
  private async logo(job: Extract<ImageJob, { op: 'logo' }>): Promise<LogoRender> {
    const cpuAtStart = process.cpuUsage();
    const watch = setInterval(() => {
      const used = process.cpuUsage(cpuAtStart);
      if ((used.user + used.system) / 1000 > job.caps.cpuMs || process.memoryUsage.rss() > job.caps.rssBytes) process.kill(process.pid, 'SIGKILL');
    }, 25);
    try {
      return await renderLogo(Buffer.from(job.bytes.buffer, job.bytes.byteOffset, job.bytes.byteLength), job.format);
    } finally {
      clearInterval(watch);
    }
  }

  private async fetch(key: string, request: FetchRequest): Promise<FetchAnswer> {
    const { client } = await this.configured();
    try {
      const answer = await client.request(request.url, {
        timeoutMs: request.timeoutMs,
        maxBytes: request.maxBytes,
        maxRedirects: request.maxRedirects,
        headers: request.headers,
      });
      if (answer.status !== 200) return { kind: 'status', status: answer.status };
      this.held.set(key, answer.body);
      return { kind: 'fetched', bytes: answer.body.length };
    } catch (error) {
      if (error instanceof OutboundError) return { kind: 'failed', failure: error.failure, message: error.message };
      throw error;
    }
  }

  private async process(key: string): Promise<ProcessAnswer> {
    const bytes = this.held.get(key);
    if (!bytes) return { kind: 'lost' };
    this.held.delete(key);
    const { store } = await this.configured();
    const check = await this.work.check(bytes);
    if (!check.ok) return { kind: 'not_image', reason: check.reason };
    const hash = createHash('sha256').update(bytes).digest('hex');
    const original = mediaFileName({ hash, ext: check.ext, size: null });
    const thumbName = mediaFileName({ hash, ext: 'webp', size: 'thumb' });
    const displayName = mediaFileName({ hash, ext: 'webp', size: 'display' });

    // The renditions are written before the original: an original in the store means all three are.
    if ((await store.stat(original)) !== null) {
      const [thumb, display] = await Promise.all([store.stat(thumbName), store.stat(displayName)]);
      if (thumb && display) return { kind: 'present', check, hash, bytes: bytes.length, renditionBytes: thumb.size + display.size };
    }

    let renditions: Renditions;
    try {
      renditions = await this.work.renditions(bytes);
    } catch (error) {
      return { kind: 'not_image', reason: `not a readable image (${(error as Error).message})` };
    }
    try {
      await store.put(thumbName, renditions.thumb, 'image/webp');
      await store.put(displayName, renditions.display, 'image/webp');
      await store.put(original, bytes, check.contentType);
    } catch (error) {
      return { kind: 'store_failed', message: `storing the copy failed (${(error as Error).message})` };
    }
    return { kind: 'stored', check, hash, bytes: bytes.length, renditionBytes: renditions.thumb.length + renditions.display.length };
  }
}

/**
 * The child's loop (image-process.ts's bootstrap calls it once the module is loaded): answers each
 * job as it comes, fetches side by side, image work one at a time (the parent sends the next
 * 'process' only after the answer).
 */
export function serveImageJobs(work: ImageWork = REAL_IMAGE_WORK): void {
  const send = process.send?.bind(process);
  if (!send) throw new Error('the image worker runs as a child process with an IPC channel');
  const worker = new ImageWorker(work);
  process.on('message', (job: ImageJob) => {
    void worker.run(job).then((answer) => send(answer));
  });
  // The process that started this child is gone (killed outright) or closed it: nothing is left to answer.
  process.on('disconnect', () => process.exit(0));
  send({ ready: true });
}
