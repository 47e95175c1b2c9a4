import { existsSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PdfCache, type PdfKey } from '../../src/pdf/pdf-cache.ts';

const DAY = 24 * 60 * 60 * 1000;
const key = (n: number, language = 'en'): PdfKey => ({ reportId: `0${n}3e4567-e89b-42d3-a456-42661417400${n}`, language, paper: 'a4', brand: '{}' });

describe('PdfCache', () => {
  let dir: string;
  let now: number;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'vinhistory-pdf-cache-'));
    now = Date.now();
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const cache = (options: Partial<{ maxPending: number; maxBytes: number; maxAgeMs: number }> = {}) =>
    new PdfCache({ dir, maxPending: 10, maxBytes: 1_000_000, maxAgeMs: 30 * DAY, now: () => now, ...options });

  /** A printed file, last served `daysAgo`. */
  function stored(c: PdfCache, k: PdfKey, bytes: number, daysAgo: number): string {
    const file = c.fileOf(k);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, Buffer.alloc(bytes, 1));
    const at = new Date(now - daysAgo * DAY);
    utimesSync(file, at, at);
    return file;
  }

  it('deletes the files not served within the age bound, and keeps the rest', async () => {
    const c = cache({ maxAgeMs: 30 * DAY });
    const old = stored(c, key(1), 100, 31);
    const recent = stored(c, key(2), 100, 29);
    await c.sweep();
    expect(existsSync(old)).toBe(false);
    expect(existsSync(recent)).toBe(true);
  });

  it('past the size bound, deletes the least recently served first', async () => {
    const c = cache({ maxBytes: 250 });
    const newest = stored(c, key(1), 100, 1);
    const middle = stored(c, key(2), 100, 2);
    const oldest = stored(c, key(3), 100, 3);
    const oldSmall = stored(c, key(4), 10, 4);
    await c.sweep();
    expect([newest, middle, oldest, oldSmall].map((file) => existsSync(file))).toEqual([true, true, false, false]);
  });

  it('sweeps after a print once the bound is passed, so the disk never holds every variant for good', async () => {
    const c = cache({ maxBytes: 1000 });
    const old = stored(c, key(1), 900, 5);
    const outcome = await c.getOrPrint(key(2), async () => Buffer.alloc(200, 2));
    expect(outcome).toMatchObject({ kind: 'pdf', cached: false });
    await c.sweep();
    expect(existsSync(old)).toBe(false);
    expect(existsSync(c.fileOf(key(2)))).toBe(true);
  });

  it('a served file counts as recent again (its time is refreshed once a day)', async () => {
    const c = cache({ maxAgeMs: 30 * DAY });
    const file = stored(c, key(1), 100, 29);
    expect(await c.read(key(1))).not.toBeNull();
    await new Promise((resolve) => setTimeout(resolve, 50));
    now += 2 * DAY;
    await c.sweep();
    expect(existsSync(file)).toBe(true);
  });

  it('refuses a new print past maxPending, lets readers join one under way, and asks the guard only for a new one', async () => {
    const c = cache({ maxPending: 2 });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let prints = 0;
    let admitted = 0;
    const print = async () => {
      prints++;
      await gate;
      return Buffer.from('%PDF-');
    };
    const admit = async () => {
      admitted++;
      return { allowed: true as const };
    };
    const first = c.getOrPrint(key(1), print, admit);
    const second = c.getOrPrint(key(2), print, admit);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await c.getOrPrint(key(3), print, admit)).toEqual({ kind: 'busy', retryAfterSeconds: 5 });
    const joined = c.getOrPrint(key(1), print, admit);
    release();
    expect((await Promise.all([first, second, joined])).map((outcome) => outcome.kind)).toEqual(['pdf', 'pdf', 'pdf']);
    expect({ prints, admitted }).toEqual({ prints: 2, admitted: 2 });
    expect(await c.getOrPrint(key(1), print, admit)).toMatchObject({ kind: 'pdf', cached: true });
  });

  it('answers limited, printing nothing, when the guard refuses', async () => {
    const c = cache();
    let prints = 0;
    const outcome = await c.getOrPrint(
      key(1),
      async () => {
        prints++;
        return Buffer.from('%PDF-');
      },
      async () => ({ allowed: false, retryAfterMs: 700 }),
    );
    expect(outcome).toEqual({ kind: 'limited', retryAfterMs: 700 });
    expect(prints).toBe(0);
  });
});
