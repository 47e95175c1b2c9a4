import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { checkImage, makeRenditions } from '../../src/media/image-check.ts';
import { CHRT } from '../../src/linux-tools.ts';
import { IMAGE_WORK_NICE, ImageProcess, ImageProcessError, type Fetched, type ImageProcessOptions } from '../../src/media/image-process.ts';
import type { FetchRequest } from '../../src/media/image-worker.ts';
import { DirectoryStore } from '../../src/media/stores/directory-store.ts';
import { outboundPolicy } from '../../src/outbound/outbound-policy.ts';
import { makeImage, startImageServer, type ImageServer } from '../support/image-server.ts';
import { CRASH, HANG } from './misbehaving-image-worker.ts';

const MISBEHAVING = new URL('./misbehaving-image-worker.ts', import.meta.url);

/** Whether a process is still there (signal 0 only checks). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The nice value and scheduling policy of every thread of a process, from /proc (fields 19 and 41 of each task's stat). */
function threads(pid: number): { nice: number; policy: number }[] {
  return readdirSync(`/proc/${pid}/task`).map((tid) => {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { nice: Number(fields[16]), policy: Number(fields[38]) };
  });
}
const SCHED_OTHER = 0;
const SCHED_IDLE = 5;

describe('the image process', () => {
  let jpeg: Buffer;
  let png: Buffer;
  let photos: ImageServer;
  let slow: ImageServer;
  let dir: string;
  const opened: ImageProcess[] = [];
  const LOCAL = outboundPolicy({ allowPrivate: true, isProduction: true });
  const open = (options: Partial<ImageProcessOptions> = {}) => {
    const images = new ImageProcess({ setup: { policy: LOCAL, store: { kind: 'directory', dir } }, ...options });
    opened.push(images);
    return images;
  };
  const request = (url: string, maxBytes = 1_000_000): FetchRequest => ({ url, timeoutMs: 5_000, maxBytes, maxRedirects: 3, headers: {} });
  /** Fetches a photo of the local host and expects its bytes held by the child. */
  const fetched = async (images: ImageProcess, route: string, host = photos) => {
    const answer = await images.fetch(request(`${host.base}${route}`));
    if (answer.kind !== 'fetched') throw new Error(`${route}: ${JSON.stringify(answer)}`);
    return answer;
  };
  const hashOf = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

  beforeAll(async () => {
    [jpeg, png] = await Promise.all([makeImage('jpeg', 7, { width: 1024, height: 768 }), makeImage('png', 8)]);
    photos = await startImageServer();
    slow = await startImageServer({ delayMs: 400 });
    photos.set('/photo.jpg', jpeg);
    photos.set('/same-photo.jpg', jpeg);
    photos.set('/photo.png', png, 'image/png');
    photos.set('/truncated.jpg', jpeg.subarray(0, Math.floor(jpeg.length / 2)));
    photos.set('/crash.jpg', Buffer.concat([jpeg, CRASH]));
    photos.set('/hang.jpg', Buffer.concat([jpeg, HANG]));
    slow.set('/photo.png', png, 'image/png');
  });
  afterAll(async () => {
    await photos.close();
    await slow.close();
  });
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'vinhistory-image-process-'));
  });
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((images) => images.close()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('fetches, checks, hashes and stores a photo with the renditions this process would make; the same bytes again are found in the store', async () => {
    const images = open();
    const first = await fetched(images, '/photo.jpg');
    expect(first.bytes).toBe(jpeg.length);
    const done = await images.process(first.key);
    const hash = hashOf(jpeg);
    expect(done).toEqual({ kind: 'stored', check: await checkImage(jpeg), hash, bytes: jpeg.length, renditionBytes: expect.any(Number) });
    expect(done).toMatchObject({ check: { ok: true, ext: 'jpg', width: 1024, height: 768 } });
    const store = new DirectoryStore(dir);
    const read = async (key: string) => Buffer.concat(await (await store.get(key))!.body.toArray());
    const inProcess = await makeRenditions(jpeg);
    expect((await read(`${hash}.jpg`)).equals(jpeg)).toBe(true);
    expect((await read(`${hash}-thumb.webp`)).equals(inProcess.thumb)).toBe(true);
    expect((await read(`${hash}-display.webp`)).equals(inProcess.display)).toBe(true);
    expect(done.kind === 'stored' && done.renditionBytes).toBe(inProcess.thumb.length + inProcess.display.length);

    const again = await images.process((await fetched(images, '/same-photo.jpg')).key);
    expect(again).toEqual({ ...done, kind: 'present' });
    const other = await images.process((await fetched(images, '/photo.png')).key);
    expect(other).toMatchObject({ kind: 'stored', hash: hashOf(png), check: { ok: true, ext: 'png' } });
  });

  it('says what is wrong with an answer that is no photo, a broken photo, an error status or an answer too large; the child stays the same', async () => {
    const images = open();
    await images.process((await fetched(images, '/photo.png')).key);
    const pid = images.pid;
    expect(await images.process((await fetched(images, '/html.jpg')).key)).toEqual({
      kind: 'not_image',
      reason: 'not an image (the content is none of JPEG, PNG, WebP, GIF, AVIF)',
    });
    expect(await images.process((await fetched(images, '/truncated.jpg')).key)).toMatchObject({ kind: 'not_image', reason: expect.stringMatching(/^not a readable image \(/) });
    expect(await images.fetch(request(`${photos.base}/missing.jpg`))).toEqual({ kind: 'status', status: 404 });
    expect(await images.fetch(request(`${photos.base}/huge.jpg`, 1_000_000))).toEqual({ kind: 'failed', failure: 'too-large', message: 'the answer is larger than 1000000 bytes' });
    // A refused photo is an answer, not a crash; nothing of the refused ones was stored.
    expect(images.pid).toBe(pid);
    expect(readdirSync(dir, { recursive: true }).filter((name) => String(name).endsWith('.jpg'))).toEqual([]);
  });

  it('holds the outbound guard in the child: without OUTBOUND_ALLOW_PRIVATE a loopback address, or a name that resolves to one, is refused', async () => {
    const images = open({ setup: { policy: outboundPolicy({ allowPrivate: false, isProduction: false }), store: { kind: 'directory', dir } } });
    const before = photos.hits.get('/photo.jpg') ?? 0;
    expect(await images.fetch(request(`${photos.base}/photo.jpg`))).toEqual({ kind: 'failed', failure: 'refused', message: `${photos.base}/photo.jpg: 127.0.0.1 is not a public address` });
    const byName = photos.base.replace('127.0.0.1', 'localhost');
    expect(await images.fetch(request(`${byName}/photo.jpg`))).toMatchObject({ kind: 'failed', failure: 'refused', message: expect.stringContaining('not a public address') });
    expect(photos.hits.get('/photo.jpg') ?? 0).toBe(before);
  });

  it.runIf(process.platform === 'linux')('runs every thread of the child at the lowest priority, libvips\' and libuv\'s included', async () => {
    const images = open({ schedIdle: false });
    await images.process((await fetched(images, '/photo.jpg')).key);
    const own = threads(images.pid!);
    // The main thread, V8's, tsx's loader, libuv's pool (where sharp runs) and libvips' own.
    expect(own.length).toBeGreaterThan(4);
    expect(new Set(own.map((thread) => thread.nice))).toEqual(new Set([IMAGE_WORK_NICE]));
    expect(new Set(own.map((thread) => thread.policy))).toEqual(new Set([SCHED_OTHER]));
    expect(threads(process.pid).map((thread) => thread.nice)).not.toContain(IMAGE_WORK_NICE);
  });

  it.runIf(CHRT !== null)('runs every thread of the child under SCHED_IDLE where chrt is there, and still answers', async () => {
    const images = open();
    expect(await images.process((await fetched(images, '/photo.jpg')).key)).toMatchObject({ kind: 'stored' });
    const own = threads(images.pid!);
    expect(own.length).toBeGreaterThan(4);
    expect(new Set(own.map((thread) => thread.policy))).toEqual(new Set([SCHED_IDLE]));
    expect(new Set(own.map((thread) => thread.nice))).toEqual(new Set([IMAGE_WORK_NICE]));
    expect(threads(process.pid).map((thread) => thread.policy)).not.toContain(SCHED_IDLE);
  });

  it('a crash fails the photo being worked on; the photos being fetched or waiting are lost, not failed; the next job gets a new child', async () => {
    const images = open({ module: MISBEHAVING });
    const waiting = await fetched(images, '/photo.png');
    const crash = await fetched(images, '/crash.jpg');
    const first = images.pid!;
    const inFlight = images.fetch(request(`${slow.base}/photo.png`)).catch((error: Error) => error);
    const crashed = images.process(crash.key).catch((error: Error) => error);
    const after = images.process(waiting.key);
    const failure = await crashed;
    expect(failure).toBeInstanceOf(ImageProcessError);
    expect(failure).toMatchObject({ failure: 'stopped', message: 'the image process stopped while working on the photo (exit code 3)' });
    expect(await inFlight).toMatchObject({ failure: 'lost', message: 'the image process stopped while the photo was being fetched (exit code 3)' });
    // Its bytes died with the first child: the new one says so, and the photo is simply fetched again.
    expect(await after).toEqual({ kind: 'lost' });
    expect(await images.process((await fetched(images, '/photo.png')).key)).toMatchObject({ kind: 'stored' });
    expect(images.pid).not.toBe(first);
    expect(alive(first)).toBe(false);
  });

  it('kills a child that takes longer than the job timeout, fails that photo and goes on with a new child', async () => {
    const images = open({ module: MISBEHAVING, jobTimeoutMs: 1_500 });
    await images.process((await fetched(images, '/photo.png')).key);
    const stuck = images.pid!;
    const hang = await fetched(images, '/hang.jpg');
    const started = Date.now();
    const failure = await images.process(hang.key).catch((error: Error) => error);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_400);
    expect(failure).toBeInstanceOf(ImageProcessError);
    expect(failure).toMatchObject({ failure: 'timeout', message: 'the image process took longer than 1.5 s over the photo' });
    expect(await images.process((await fetched(images, '/photo.jpg')).key)).toMatchObject({ kind: 'stored' });
    expect(images.pid).not.toBe(stuck);
    expect(alive(stuck)).toBe(false);
  });

  it('close() loses the queued photos, lets the child exit, and a job after it starts a new child', async () => {
    const images = open({ module: MISBEHAVING, jobTimeoutMs: 60_000 });
    const hang = await fetched(images, '/hang.jpg');
    const waiting = await fetched(images, '/photo.png');
    const first = images.pid!;
    const running = images.process(hang.key).catch((error: Error) => error);
    const queued = images.process(waiting.key).catch((error: Error) => error);
    await images.close();
    expect(await queued).toMatchObject({ failure: 'lost', message: 'the image process was closed' });
    expect(await running).toMatchObject({ failure: 'stopped' });
    expect(alive(first)).toBe(false);
    const next: Fetched = await images.fetch(request(`${photos.base}/photo.png`));
    expect(next.kind).toBe('fetched');
    expect(images.pid).not.toBe(first);
  });
  it('with a share below 1 rests after each photo: the next starts only after the work times (1/share - 1)', async () => {
    const images = open({ share: 0.25 });
    const [a, b] = [await fetched(images, '/photo.jpg'), await fetched(images, '/photo.png')];
    const start = performance.now();
    const answered: number[] = [];
    await Promise.all([a, b].map((photo) => images.process(photo.key).then(() => answered.push(performance.now()))));
    const firstWork = answered[0]! - start;
    // Rest after the first: 3 times its work; the second's own work comes on top.
    expect(answered[1]! - answered[0]!).toBeGreaterThanOrEqual(3 * firstWork - 5);
  });

  it('close() during a rest loses the waiting photo at once', async () => {
    const images = open({ share: 0.01 });
    const [a, b] = [await fetched(images, '/photo.jpg'), await fetched(images, '/photo.png')];
    await images.process(a.key);
    const waiting = images.process(b.key).catch((error: Error) => error);
    const closing = performance.now();
    await images.close();
    expect(await waiting).toMatchObject({ failure: 'lost', message: 'the image process was closed' });
    expect(performance.now() - closing).toBeLessThan(5_000);
  });

  it('refuses a share that is not above 0 and at most 1', () => {
    for (const share of [0, -0.5, 1.5, Number.NaN]) expect(() => open({ share })).toThrow(RangeError);
  });
});
