import { ImageProcess, ImageProcessError } from './image-process.ts';
import type { LogoCaps } from './image-worker.ts';
import type { LogoRender } from './logo-render.ts';

/**
 * What drawing one uploaded logo may take (docs/decisions.md, issue 28 F2). A real logo, even a
 * 4096×4096 PNG, decodes and draws in well under half a second of CPU and 200 MiB; the server's
 * own event loop and libuv pool take no part in it.
 */
export const LOGO_WORK_LIMITS = Object.freeze({
  /** CPU time of the child's threads for one logo; past it the child kills itself. */
  cpuMs: 2_000,
  /** The child's resident memory while drawing; past it the child kills itself. */
  rssBytes: 512 * 1024 * 1024,
  /** The child's data size (RLIMIT_DATA): an allocation past it fails in the child. */
  dataBytes: 768 * 1024 * 1024,
  /** Wall time from the logo's start in the child, for a child starved of CPU or stuck: then it is killed. */
  wallMs: 15_000,
  /** Logos drawn or waiting at once; the next is refused with a message to send it again. */
  inFlight: 4,
});

export interface LogoProcessOptions {
  caps?: Partial<LogoCaps>;
  wallMs?: number;
  inFlight?: number;
}

/**
 * Draws uploaded logos in a child process of their own (the photo archive's ImageProcess, with no
 * store), one at a time, each under a CPU, memory and time cap: a logo past one is refused and the
 * child killed, the next logo starting a new one. The child runs at the lowest CPU priority, so a
 * logo never takes the CPU from searches, log-ins or /healthz.
 */
export class LogoProcess {
  private readonly images: ImageProcess;
  private readonly caps: LogoCaps;
  private readonly maxInFlight: number;
  private inFlight = 0;

  constructor(options: LogoProcessOptions = {}) {
    this.caps = { cpuMs: options.caps?.cpuMs ?? LOGO_WORK_LIMITS.cpuMs, rssBytes: options.caps?.rssBytes ?? LOGO_WORK_LIMITS.rssBytes };
    this.maxInFlight = options.inFlight ?? LOGO_WORK_LIMITS.inFlight;
    // Not SCHED_IDLE: a customer waits for this answer, and niceness alone leaves the server first.
    this.images = new ImageProcess({ schedIdle: false, jobTimeoutMs: options.wallMs ?? LOGO_WORK_LIMITS.wallMs, dataBytes: LOGO_WORK_LIMITS.dataBytes });
  }

  /** The child's process id while it runs (tests). */
  get pid(): number | undefined {
    return this.images.pid;
  }

  async render(bytes: Buffer, format: 'png' | 'svg'): Promise<LogoRender> {
    if (this.inFlight >= this.maxInFlight) {
      return { kind: 'invalid', message: 'Other logos are being drawn right now; send yours again in a minute.' };
    }
    this.inFlight++;
    try {
      return await this.images.logo(bytes, format, this.caps);
    } catch (error) {
      if (error instanceof ImageProcessError && error.failure !== 'lost') {
        return {
          kind: 'invalid',
          message: `The logo takes too much work to draw (more than ${this.caps.cpuMs / 1000} s or ${this.caps.rssBytes / 1024 / 1024} MiB). Simplify it, or save it as a PNG.`,
        };
      }
      throw error;
    } finally {
      this.inFlight--;
    }
  }

  close(): Promise<void> {
    return this.images.close();
  }
}
