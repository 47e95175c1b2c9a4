import { describe, expect, it } from 'vitest';
import { ArchivePacer, eventLoopDelay, type DelaySource } from '../../src/media/archive-pacer.ts';

/** A delay source that reads the given p99s one per look, the last one ever after. */
function delays(values: number[]): DelaySource & { looks: number } {
  const source = {
    looks: 0,
    p99Ms: () => values[Math.min(source.looks++, values.length - 1)]!,
    close: () => {},
  };
  return source;
}

describe('the archive pacer', () => {
  it('lets a photo go at once while the event loop keeps up', async () => {
    const pauses: number[] = [];
    const pacer = new ArchivePacer({ source: delays([3]), sleep: async (ms) => void pauses.push(ms) });
    expect(await pacer.wait()).toBe(0);
    expect(pauses).toEqual([]);
    expect(pacer.paused).toBe(0);
  });

  it('waits while the loop is late, each pause twice the last up to the longest, and goes on once it keeps up', async () => {
    const pauses: number[] = [];
    const pacer = new ArchivePacer({ busyDelayMs: 20, firstPauseMs: 100, maxPauseMs: 400, source: delays([50, 35, 21, 80, 25, 5]), sleep: async (ms) => void pauses.push(ms) });
    expect(await pacer.wait()).toBe(100 + 200 + 400 + 400 + 400);
    expect(pauses).toEqual([100, 200, 400, 400, 400]);
  });

  it('waits no longer than maxWaitMs in all, however busy the loop stays', async () => {
    const pauses: number[] = [];
    const pacer = new ArchivePacer({ busyDelayMs: 20, firstPauseMs: 100, maxPauseMs: 1_600, maxWaitMs: 1_000, source: delays([500]), sleep: async (ms) => void pauses.push(ms) });
    expect(await pacer.wait()).toBe(1_000);
    expect(pauses).toEqual([100, 200, 400, 300]);
  });

  it('stops waiting when the archiver stops', async () => {
    const stop = new AbortController();
    const pacer = new ArchivePacer({
      source: delays([500]),
      sleep: async () => {
        stop.abort();
      },
    });
    expect(await pacer.wait(stop.signal)).toBe(100);
  });

  it('reads the event loop\'s real delay: a loop blocked for 150 ms shows in the next window\'s p99', async () => {
    const source = eventLoopDelay(300);
    try {
      await new Promise((resolve) => setTimeout(resolve, 350));
      expect(source.p99Ms()).toBeLessThan(100);
      // Block the loop within a window, then let the window close.
      await new Promise((resolve) => setTimeout(resolve, 20));
      const until = performance.now() + 150;
      while (performance.now() < until);
      // Whichever window the late tick falls in, it is read within two windows.
      let seen = 0;
      for (let waited = 0; waited < 700; waited += 20) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        seen = Math.max(seen, source.p99Ms());
      }
      expect(seen).toBeGreaterThan(100);
    } finally {
      source.close();
    }
  });
});
