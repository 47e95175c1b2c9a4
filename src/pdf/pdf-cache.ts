import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** How long a refused reader is asked to wait when every print slot and queue place is taken: a print takes about a second. */
export const PDF_BUSY_RETRY_AFTER_SECONDS = 5;
/** A served PDF's time is refreshed at most this often: one write per file a day, not one per read. */
const TOUCH_AFTER_MS = 24 * 60 * 60 * 1000;
/** Sweeps run after a write, at most this often, or sooner once a tenth of the bound was written since the last. */
const SWEEP_EVERY_MS = 60 * 1000;
/** A temporary file older than this was left by a process that died while writing. */
const STALE_TEMPORARY_MS = 60 * 60 * 1000;

export interface PdfCacheOptions {
  dir: string;
  /** Prints in flight at once (printing or waiting for a slot); one more is refused as busy. */
  maxPending: number;
  /** The most the files may take together; the least recently served go first past it. */
  maxBytes: number;
  /** A file not served for this long is deleted. */
  maxAgeMs: number;
  now?: () => number;
}

/** Whether a new print may start for this reader: the route's per-client guard. */
export type PrintAdmission = { allowed: true } | { allowed: false; retryAfterMs: number };

export type PdfOutcome =
  | { kind: 'pdf'; pdf: Buffer; cached: boolean }
  /** Every print slot and queue place is taken: try again in a moment. */
  | { kind: 'busy'; retryAfterSeconds: number }
  /** This reader started too many prints just now. */
  | { kind: 'limited'; retryAfterMs: number };

/**
 * Printed report PDFs on disk under DATA_DIR: a report never changes, so a PDF printed once (per
 * language, paper and brand) is served from here until it goes unread for `maxAgeMs` or the files
 * outgrow `maxBytes`. Written to a temporary name and renamed, so that a reader never gets half a
 * file; concurrent requests for one PDF print it once. Prints are bounded: at most `maxPending` at
 * once in this process, and each new one must be admitted by the caller's per-client guard, so
 * that a flood of uncached variants is refused at once instead of queued in front of every reader.
 */
export class PdfCache {
  private readonly inFlight = new Map<string, Promise<Buffer>>();
  private readonly now: () => number;
  private lastSweep = 0;
  private writtenSinceSweep = 0;
  private sweeping: Promise<void> | null = null;

  constructor(private readonly options: PdfCacheOptions) {
    this.now = options.now ?? Date.now;
  }

  /** The file of a PDF: report ids are UUIDs and the rest is hashed, so no name reaches the path unchecked. */
  fileOf(key: PdfKey): string {
    const variant = createHash('sha256').update(`${key.language}\n${key.paper}\n${key.brand}`).digest('hex').slice(0, 16);
    return path.join(this.options.dir, key.reportId.slice(0, 2), `${key.reportId}-${key.language}-${key.paper}-${variant}.pdf`);
  }

  async read(key: PdfKey): Promise<Buffer | null> {
    const file = this.fileOf(key);
    try {
      const pdf = await readFile(file);
      this.touch(file);
      return pdf;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }

  /** A file's modification time is when it was last served, which age and size eviction go by. */
  private touch(file: string): void {
    void stat(file)
      .then((info) => {
        if (this.now() - info.mtimeMs < TOUCH_AFTER_MS) return;
        const at = new Date(this.now());
        return utimes(file, at, at);
      })
      .catch(() => {});
  }

  /**
   * The cached PDF, or the one `print` makes (once, however many ask at the same moment), stored
   * for next time. A reader joining a print already under way is neither counted nor refused;
   * a new print is refused when `maxPending` are in flight, or when `admit` says no.
   */
  async getOrPrint(key: PdfKey, print: () => Promise<Buffer>, admit: () => Promise<PrintAdmission> = async () => ({ allowed: true })): Promise<PdfOutcome> {
    const stored = await this.read(key);
    if (stored) return { kind: 'pdf', pdf: stored, cached: true };
    const file = this.fileOf(key);
    let pending = this.inFlight.get(file);
    if (!pending) {
      if (this.inFlight.size >= this.options.maxPending) return { kind: 'busy', retryAfterSeconds: PDF_BUSY_RETRY_AFTER_SECONDS };
      const admission = await admit();
      if (!admission.allowed) return { kind: 'limited', retryAfterMs: admission.retryAfterMs };
      // The guard may have waited on Redis: another reader may have started this print, or taken the last place.
      pending = this.inFlight.get(file);
      if (!pending) {
        if (this.inFlight.size >= this.options.maxPending) return { kind: 'busy', retryAfterSeconds: PDF_BUSY_RETRY_AFTER_SECONDS };
        pending = this.printAndStore(file, print).finally(() => this.inFlight.delete(file));
        this.inFlight.set(file, pending);
      }
    }
    return { kind: 'pdf', pdf: await pending, cached: false };
  }

  private async printAndStore(file: string, print: () => Promise<Buffer>): Promise<Buffer> {
    const pdf = await print();
    await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
    const temporary = `${file}.${randomBytes(6).toString('hex')}.tmp`;
    await writeFile(temporary, pdf, { mode: 0o600 });
    await rename(temporary, file);
    this.writtenSinceSweep += pdf.length;
    if (this.now() - this.lastSweep >= SWEEP_EVERY_MS || this.writtenSinceSweep >= this.options.maxBytes / 10) {
      // In the background: the reader has its PDF; a failed sweep is tried again after the next write.
      void this.sweep().catch(() => {});
    }
    return pdf;
  }

  /**
   * Deletes the files not served for `maxAgeMs`, then the least recently served until the rest fit
   * in `maxBytes`, and temporary files a dead process left. One sweep at a time.
   */
  sweep(): Promise<void> {
    this.sweeping ??= this.sweepOnce().finally(() => {
      this.sweeping = null;
    });
    return this.sweeping;
  }

  private async sweepOnce(): Promise<void> {
    const now = this.now();
    this.lastSweep = now;
    this.writtenSinceSweep = 0;
    const files: { file: string; size: number; servedAt: number }[] = [];
    let shards: string[];
    try {
      shards = await readdir(this.options.dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw error;
    }
    for (const shard of shards) {
      const names = await readdir(path.join(this.options.dir, shard)).catch(() => [] as string[]);
      for (const name of names) {
        const file = path.join(this.options.dir, shard, name);
        const info = await stat(file).catch(() => null);
        if (!info?.isFile()) continue;
        if (name.endsWith('.tmp')) {
          if (now - info.mtimeMs > STALE_TEMPORARY_MS) await rm(file, { force: true });
        } else if (name.endsWith('.pdf')) {
          files.push({ file, size: info.size, servedAt: info.mtimeMs });
        }
      }
    }
    files.sort((a, b) => b.servedAt - a.servedAt);
    let kept = 0;
    let full = false;
    for (const entry of files) {
      // Past the bound, every older file goes too: a small old file does not outstay a large recent one.
      full ||= kept + entry.size > this.options.maxBytes;
      if (full || now - entry.servedAt > this.options.maxAgeMs) await rm(entry.file, { force: true });
      else kept += entry.size;
    }
  }
}

export interface PdfKey {
  reportId: string;
  language: string;
  paper: string;
  /** What the brand looks like (its settings, serialised): a changed brand prints anew. */
  brand: string;
}
