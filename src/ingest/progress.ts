import cliProgress from 'cli-progress';
import type { ImportSummary } from './import-summary.ts';

/**
 * Progress of an import on stderr: a live bar on a terminal (rows, rows per second, and the ETA
 * from the bytes read out of the file's size), plain lines every few seconds otherwise (a log file
 * or a CI job), and nothing for an import that ends before the first line is due.
 */
export interface ProgressSource {
  label: string;
  /** Rows read so far: the summary the import counts into. */
  summary: Readonly<ImportSummary>;
  /** Bytes of the file read so far, and its size, when known (not for stdin). */
  bytesRead?: () => number;
  totalBytes?: number | null;
  /** What bytesRead and totalBytes count: bytes of a file (default), or rows (a generator). */
  unit?: 'bytes' | 'rows';
}

export interface ProgressReporter {
  /** Prints a line (a skipped record) without breaking the bar. */
  log(line: string): void;
  stop(): void;
}

const integer = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds)) return 'unknown';
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

function formatBytes(bytes: number): string {
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(0)} KiB`;
  if (bytes < 1024 ** 3) return `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
  return `${(bytes / 1024 ** 3).toFixed(2)} GiB`;
}

/** Figures of one moment: rows, their rate since the start, and how far through the file. */
function snapshot(source: ProgressSource, startedAt: number) {
  const seconds = Math.max(0.001, (performance.now() - startedAt) / 1000);
  const rows = source.summary.read;
  const bytes = source.bytesRead?.() ?? 0;
  const total = source.totalBytes ?? null;
  const fraction = total ? Math.min(1, bytes / total) : null;
  const eta = fraction !== null && fraction > 0 ? (seconds / fraction) * (1 - fraction) : Number.NaN;
  return { seconds, rows, rate: rows / seconds, bytes, total, fraction, eta };
}

class PlainProgress implements ProgressReporter {
  private readonly timer: NodeJS.Timeout;
  private readonly startedAt = performance.now();

  constructor(
    private readonly source: ProgressSource,
    private readonly out: NodeJS.WritableStream,
    intervalMs: number,
  ) {
    this.timer = setInterval(() => this.print(), intervalMs);
    this.timer.unref();
  }

  private print(): void {
    const now = snapshot(this.source, this.startedAt);
    const parts = [`${integer.format(now.rows)} rows`, `${integer.format(now.rate)} rows/s`];
    if (now.fraction !== null && now.total !== null) {
      const of = this.source.unit === 'rows' ? `${integer.format(now.total)} rows` : formatBytes(now.total);
      parts.push(`${(now.fraction * 100).toFixed(1)}% of ${of}`, `about ${formatDuration(now.eta)} left`);
    }
    this.out.write(`${this.source.label}: ${parts.join(', ')}\n`);
  }

  log(line: string): void {
    this.out.write(`${line}\n`);
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

class BarProgress implements ProgressReporter {
  private readonly bars: cliProgress.MultiBar;
  private readonly bar: cliProgress.SingleBar;
  private readonly timer: NodeJS.Timeout;
  private readonly startedAt = performance.now();

  constructor(
    private readonly source: ProgressSource,
    out: NodeJS.WritableStream,
  ) {
    const sized = Boolean(source.totalBytes);
    this.bars = new cliProgress.MultiBar(
      {
        stream: out,
        format: sized
          ? '{label} [{bar}] {percentage}% | {rows} rows | {rate} rows/s | ETA {eta_formatted}'
          : '{label} | {rows} rows | {rate} rows/s',
        barsize: 30,
        hideCursor: true,
        clearOnComplete: true,
        etaBuffer: 50,
      },
      cliProgress.Presets.shades_classic,
    );
    this.bar = this.bars.create(sized ? source.totalBytes! : 1, 0, { label: source.label, rows: '0', rate: '0' });
    this.timer = setInterval(() => this.update(), 200);
    this.timer.unref();
  }

  private update(): void {
    const now = snapshot(this.source, this.startedAt);
    this.bar.update(now.total ? now.bytes : 0, { label: this.source.label, rows: integer.format(now.rows), rate: integer.format(now.rate) });
  }

  log(line: string): void {
    this.bars.log(`${line}\n`);
  }

  stop(): void {
    clearInterval(this.timer);
    this.bars.stop();
  }
}

/** No display at all (--json without a terminal, tests): skipped records still go to stderr. */
class SilentProgress implements ProgressReporter {
  constructor(private readonly out: NodeJS.WritableStream) {}
  log(line: string): void {
    this.out.write(`${line}\n`);
  }
  stop(): void {}
}

export function startProgress(
  source: ProgressSource,
  options: { out?: NodeJS.WritableStream & { isTTY?: boolean }; enabled?: boolean; intervalMs?: number } = {},
): ProgressReporter {
  const out = options.out ?? process.stderr;
  if (options.enabled === false) return new SilentProgress(out);
  if (out.isTTY) return new BarProgress(source, out);
  return new PlainProgress(source, out, options.intervalMs ?? 5000);
}
