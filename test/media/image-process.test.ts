import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { checkImage, makeRenditions } from '../../src/media/image-check.ts';
import { CHRT, IMAGE_WORK_NICE, ImageProcess, ImageProcessError } from '../../src/media/image-process.ts';
import { makeImage } from '../support/image-server.ts';
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
  const opened: ImageProcess[] = [];
  const open = (options: ConstructorParameters<typeof ImageProcess>[0] = {}) => {
    const images = new ImageProcess(options);
    opened.push(images);
    return images;
  };

  beforeAll(async () => {
    [jpeg, png] = await Promise.all([makeImage('jpeg', 7, { width: 1024, height: 768 }), makeImage('png', 8)]);
  });
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((images) => images.close()));
  });

  it('answers what the same work in this process answers: the check, the SHA-256 and byte-identical renditions', async () => {
    const images = open();
    const [checkedJpeg, checkedPng, renditions] = await Promise.all([images.check(jpeg), images.check(png), images.renditions(jpeg)]);
    expect(checkedJpeg).toEqual({ check: await checkImage(jpeg), hash: createHash('sha256').update(jpeg).digest('hex') });
    expect(checkedJpeg.check).toMatchObject({ ok: true, ext: 'jpg', width: 1024, height: 768 });
    expect(checkedPng).toEqual({ check: await checkImage(png), hash: createHash('sha256').update(png).digest('hex') });
    const inProcess = await makeRenditions(jpeg);
    expect(Buffer.isBuffer(renditions.thumb)).toBe(true);
    expect(renditions.thumb.equals(inProcess.thumb)).toBe(true);
    expect(renditions.display.equals(inProcess.display)).toBe(true);
  });

  it('says what is wrong with bytes that are no photo, and fails renditions of a broken one with sharp\'s reason', async () => {
    const images = open();
    expect((await images.check(Buffer.from('<html>photo removed</html>'))).check).toEqual({
      ok: false,
      reason: 'not an image (the content is none of JPEG, PNG, WebP, GIF, AVIF)',
    });
    const truncated = jpeg.subarray(0, Math.floor(jpeg.length / 2));
    const failure = await images.renditions(truncated).catch((error: Error) => error);
    expect(failure).toBeInstanceOf(Error);
    expect(failure).not.toBeInstanceOf(ImageProcessError);
    // The child is still the same one: a refused photo is an answer, not a crash.
    const pid = images.pid;
    await images.check(jpeg);
    expect(images.pid).toBe(pid);
  });

  it.runIf(process.platform === 'linux')('runs every thread of the child at the lowest priority, libvips\' and libuv\'s included', async () => {
    const images = open({ schedIdle: false });
    await images.renditions(jpeg);
    const own = threads(images.pid!);
    // The main thread, V8's, tsx's loader, libuv's pool (where sharp runs) and libvips' own.
    expect(own.length).toBeGreaterThan(4);
    expect(new Set(own.map((thread) => thread.nice))).toEqual(new Set([IMAGE_WORK_NICE]));
    expect(new Set(own.map((thread) => thread.policy))).toEqual(new Set([SCHED_OTHER]));
    expect(threads(process.pid).map((thread) => thread.nice)).not.toContain(IMAGE_WORK_NICE);
  });

  it.runIf(CHRT !== null)('runs every thread of the child under SCHED_IDLE where chrt is there, and still answers', async () => {
    const images = open();
    const { check } = await images.check(jpeg);
    expect(check.ok).toBe(true);
    await images.renditions(jpeg);
    const own = threads(images.pid!);
    expect(own.length).toBeGreaterThan(4);
    expect(new Set(own.map((thread) => thread.policy))).toEqual(new Set([SCHED_IDLE]));
    expect(new Set(own.map((thread) => thread.nice))).toEqual(new Set([IMAGE_WORK_NICE]));
    expect(threads(process.pid).map((thread) => thread.policy)).not.toContain(SCHED_IDLE);
  });

  it('fails the job a crashed child was working on, and starts a new child for the next', async () => {
    const images = open({ module: MISBEHAVING });
    await images.check(jpeg);
    const first = images.pid!;
    const queued = images.check(png);
    const crash = images.renditions(Buffer.concat([jpeg, CRASH])).catch((error: Error) => error);
    const after = images.renditions(jpeg);
    // In order: the queued check is answered by the first child, the crash takes it down, the
    // renditions after it get a new one.
    expect((await queued).check).toMatchObject({ ok: true, ext: 'png' });
    const failure = await crash;
    expect(failure).toBeInstanceOf(ImageProcessError);
    expect(failure).toMatchObject({ failure: 'stopped', message: 'the image process stopped while working on the photo (exit code 3)' });
    expect((await after).display.length).toBeGreaterThan(0);
    expect(images.pid).not.toBe(first);
    expect(alive(first)).toBe(false);
  });

  it('kills a child that takes longer than the job timeout, fails that job and goes on with a new child', async () => {
    const images = open({ module: MISBEHAVING, jobTimeoutMs: 1_500 });
    await images.check(jpeg);
    const stuck = images.pid!;
    const started = Date.now();
    const failure = await images.check(Buffer.concat([jpeg, HANG])).catch((error: Error) => error);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_400);
    expect(failure).toBeInstanceOf(ImageProcessError);
    expect(failure).toMatchObject({ failure: 'timeout', message: 'the image process took longer than 1.5 s over the photo' });
    expect((await images.check(jpeg)).check.ok).toBe(true);
    expect(images.pid).not.toBe(stuck);
    expect(alive(stuck)).toBe(false);
  });

  it('close() fails the queued jobs, lets the child exit, and a job after it starts a new child', async () => {
    const images = open({ module: MISBEHAVING, jobTimeoutMs: 60_000 });
    await images.check(jpeg);
    const first = images.pid!;
    const running = images.check(Buffer.concat([jpeg, HANG])).catch((error: Error) => error);
    const queued = images.check(jpeg).catch((error: Error) => error);
    await images.close();
    expect(await queued).toMatchObject({ failure: 'stopped', message: 'the image process was closed' });
    expect(await running).toMatchObject({ failure: 'stopped' });
    expect(alive(first)).toBe(false);
    expect((await images.check(png)).check.ok).toBe(true);
    expect(images.pid).not.toBe(first);
  });
});
