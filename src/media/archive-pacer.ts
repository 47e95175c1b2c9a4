import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';

export interface PacerOptions {
  /** The event loop's delay (p99 over the last window, ms) above which the archive waits. */
  busyDelayMs: number;
  /** How often the delay is read (and its histogram started afresh). */
  windowMs: number;
  /** The first pause; each next one while the loop stays busy is twice as long, up to maxPauseMs. */
  firstPauseMs: number;
  maxPauseMs: number;
  /**
   * The longest a photo waits in all: past it the photo goes on whatever the delay (a server busy
   * for good, or with a slow loop for other reasons, still archives, slowly).
   */
  maxWaitMs: number;
}

export const DEFAULT_PACING: PacerOptions = { busyDelayMs: 20, windowMs: 500, firstPauseMs: 100, maxPauseMs: 1_600, maxWaitMs: 10_000 };

/** Where the pacer reads the delay: the event loop's, or a test's. */
export interface DelaySource {
  /** The p99 delay of the last whole window, in ms; 0 before the first. */
  p99Ms(): number;
  close(): void;
}

/**
 * The server's event loop delay from perf_hooks (a timer every 10 ms and how late it fires), read
 * per window: a loop that answers searches late is either busy with them or short of CPU, and in
 * both cases the archive should wait.
 */
export function eventLoopDelay(windowMs: number): DelaySource {
  const histogram: IntervalHistogram = monitorEventLoopDelay({ resolution: 10 });
  histogram.enable();
  let last = 0;
  const timer = setInterval(() => {
    last = histogram.count > 0 ? histogram.percentile(99) / 1e6 : 0;
    histogram.reset();
  }, windowMs);
  timer.unref();
  return {
    p99Ms: () => last,
    close: () => {
      clearInterval(timer);
      histogram.disable();
    },
  };
}

/**
 * Lets the archive yield to the searches: before a photo's image work the archiver asks wait(),
 * which returns at once while the server's event loop keeps up, and otherwise pauses (100 ms,
 * then twice as long each time the loop is still busy, up to 1.6 s) until it does, or until
 * maxWaitMs have passed. The image work itself runs at idle priority in a child process; what
 * this holds back is the rest of a photo's cost (the child's memory traffic and caches, the
 * server's own share of a photo) when the searches have no room to spare.
 */
export class ArchivePacer {
  private readonly options: PacerOptions;
  private readonly source: DelaySource;
  private readonly pause: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Pauses taken since the pacer started (metrics, tests). */
  paused = 0;

  constructor(options: Partial<PacerOptions> & { source?: DelaySource; sleep?: (ms: number, signal?: AbortSignal) => Promise<void> } = {}) {
    const { source, sleep: pause, ...rest } = options;
    this.options = { ...DEFAULT_PACING, ...rest };
    this.source = source ?? eventLoopDelay(this.options.windowMs);
    // A photo is under way: its pause keeps a CLI's process alive (the image process's channel is idle meanwhile).
    this.pause = pause ?? ((ms, signal) => sleep(ms, undefined, { signal }).catch(() => {}));
  }

  /** Resolves when the photo may go on; the time it waited, in ms. */
  async wait(signal?: AbortSignal): Promise<number> {
    const { busyDelayMs, firstPauseMs, maxPauseMs, maxWaitMs } = this.options;
    let waited = 0;
    let next = firstPauseMs;
    while (!signal?.aborted && this.source.p99Ms() > busyDelayMs && waited < maxWaitMs) {
      const ms = Math.min(next, maxWaitMs - waited);
      this.paused++;
      await this.pause(ms, signal);
      waited += ms;
      next = Math.min(next * 2, maxPauseMs);
    }
    return waited;
  }

  close(): void {
    this.source.close();
  }
}
