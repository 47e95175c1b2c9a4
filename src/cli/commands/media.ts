import { InvalidArgumentError, type Command } from 'commander';
import cliProgress from 'cli-progress';
import type { MediaStatus } from '../../domain/media.ts';
import type { ArchiveTotals } from '../../media/archiver.ts';
import { CliError } from '../cli-error.ts';
import { withDatabase } from '../database.ts';
import { parsePositiveInteger } from '../options.ts';
import { formatTable } from '../table.ts';

const EXIT_INTERRUPTED = 130;
const ARCHIVE_OFF = 'the photo archive is off: set MEDIA_ARCHIVE=directory (or s3, with S3_BUCKET) first (docs/media.md)';

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 ** 2) return `${(bytes / 1024).toFixed(1)} KiB`;
  if (bytes < 1024 ** 3) return `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
  return `${(bytes / 1024 ** 3).toFixed(2)} GiB`;
}

export function formatMediaStatus(status: MediaStatus, store: string | null): string {
  const lines = [
    `archive: ${store ?? 'off'}`,
    `queued ${status.queued}, retrying ${status.retrying}, archived ${status.archived}, failed ${status.failed}, removed ${status.removed}`,
    `stored: ${status.objects} distinct photos, ${formatBytes(status.bytes)} (originals and renditions)`,
    '',
  ];
  let text = lines.join('\n');
  if (status.hosts.length > 0) {
    text += formatTable(
      [
        { header: 'host' },
        { header: 'queued', align: 'right' },
        { header: 'retrying', align: 'right' },
        { header: 'archived', align: 'right' },
        { header: 'failed', align: 'right' },
        { header: 'bytes', align: 'right' },
      ],
      status.hosts.map((host) => [host.host, String(host.queued), String(host.retrying), String(host.archived), String(host.failed), formatBytes(host.bytes)]),
    );
  }
  if (status.recentErrors.length > 0) {
    text += '\nlatest failures:\n';
    for (const failure of status.recentErrors) text += `  ${failure.url}: ${failure.error} (attempt ${failure.attempts})\n`;
  }
  return text;
}

/** A bar on a terminal, a line every 5 s otherwise (a log file), nothing when asked for none. */
function progressDisplay(enabled: boolean, label: string, total: number) {
  if (!enabled) return { update: (_value: number, _text: string) => {}, stop: () => {} };
  if (process.stderr.isTTY) {
    const bar = new cliProgress.SingleBar(
      { stream: process.stderr, format: `${label} [{bar}] {value}/{total} {text} | {eta_formatted} left`, hideCursor: true, etaBuffer: 50 },
      cliProgress.Presets.shades_classic,
    );
    bar.start(Math.max(total, 1), 0, { text: '' });
    return {
      update: (value: number, text: string) => {
        if (value > bar.getTotal()) bar.setTotal(value);
        bar.update(value, { text });
      },
      stop: () => bar.stop(),
    };
  }
  let last = 0;
  return {
    update: (value: number, text: string) => {
      if (Date.now() - last < 5_000) return;
      last = Date.now();
      process.stderr.write(`${label}: ${value}/${total} ${text}\n`);
    },
    stop: () => {},
  };
}

function parseLotKey(text: string): { auction: string; lotId: number } {
  const match = /^([a-z][a-z0-9_-]{0,31}):(\d{1,10})$/.exec(text.trim().toLowerCase());
  if (!match) throw new InvalidArgumentError('Expected <auction>:<lot id>, such as copart:34917760.');
  return { auction: match[1]!, lotId: Number(match[2]) };
}

interface ArchiveOptions {
  backfill: boolean;
  retryFailed?: boolean;
  concurrency?: number;
  json?: boolean;
  progress: boolean;
}

export function registerMediaCommands(program: Command): void {
  const media = program.command('media').description('the photo archive: backfill and archive, status, deleting a lot\'s photos (docs/media.md)');

  media
    .command('status')
    .description('queued, retrying, archived and failed photos, bytes stored, per host, and the latest failures')
    .option('--json', 'print the status as one JSON object')
    .action(async (options: { json?: boolean }) => {
      const { status, store } = await withDatabase(async ({ services }) => ({ status: await services.media.status(), store: services.media.storeKind }));
      process.stdout.write(options.json ? `${JSON.stringify({ store, ...status })}\n` : formatMediaStatus(status, store));
    });

  media
    .command('archive')
    .description('queue the photos of every stored lot (a backfill), then archive everything due now, and exit')
    .option('--no-backfill', 'archive what is queued, without reading the lots first')
    .option('--retry-failed', 'try the photos that were given up on again, now')
    .option('--concurrency <n>', 'photos fetched at once (MEDIA_CONCURRENCY otherwise)', parsePositiveInteger)
    .option('--json', 'print the totals as one JSON object')
    .option('--no-progress', 'no progress bar or progress lines')
    .addHelpText(
      'after',
      `
Runs beside a server with the archive on, or alone: claims are shared through the database, so no
photo is fetched by two at once. Photos that fail are queued again with a growing pause (1 min,
4 min, 16 min, ...) and left for a later run or the server. Ctrl-C stops claiming and finishes the
photos in flight.

Exit status: 0 done (failures are reported, not fatal); 1 the archive is off or the run failed; 130 interrupted.`,
    )
    .action(async (options: ArchiveOptions) => {
      const stop = new AbortController();
      const onSignal = () => {
        if (stop.signal.aborted) process.exit(EXIT_INTERRUPTED);
        stop.abort();
        process.stderr.write('\nstopping: finishing the photos in flight (Ctrl-C again to quit at once)\n');
      };
      process.on('SIGINT', onSignal);
      process.on('SIGTERM', onSignal);
      const showProgress = options.progress && !(options.json && !process.stderr.isTTY);
      try {
        const result = await withDatabase(async ({ services }) => {
          const archiver = services.media.createArchiver(options.concurrency ? { concurrency: options.concurrency } : {});
          if (!archiver) throw new CliError(ARCHIVE_OFF);
          const retried = options.retryFailed ? await services.media.retryFailed() : 0;
          let queued = 0;
          if (options.backfill) {
            let display: ReturnType<typeof progressDisplay> | null = null;
            const backfill = await services.media.backfill({
              signal: stop.signal,
              onProgress: (progress) => {
                display ??= progressDisplay(showProgress, 'queueing lots', progress.lotsTotal);
                display.update(progress.lotsRead, `lots, ${progress.queued} photos queued`);
              },
            });
            (display as ReturnType<typeof progressDisplay> | null)?.stop();
            queued = backfill.queued;
          }
          const before = await services.media.status();
          const display = progressDisplay(showProgress, 'archiving', before.queued + before.retrying);
          const totals: ArchiveTotals = await archiver.drain({
            signal: stop.signal,
            onArchived: (t) =>
              display.update(t.archived + t.deduplicated + t.failed, `archived ${t.archived + t.deduplicated}, retrying ${t.failed - t.givenUp}, failed ${t.givenUp}, ${formatBytes(t.bytes)}`),
          });
          display.stop();
          return { retried, queued, totals };
        });
        // In `media status`'s terms: "retrying" failed an attempt and is tried again later, "failed" was given up on.
        const { archived, deduplicated, bytes } = result.totals;
        const retrying = result.totals.failed - result.totals.givenUp;
        const failed = result.totals.givenUp;
        if (options.json) {
          process.stdout.write(`${JSON.stringify({ retried_failed: result.retried, queued: result.queued, archived, deduplicated, retrying, failed, bytes })}\n`);
        } else {
          process.stdout.write(
            `queued ${result.queued} new photos; archived ${archived} (+${deduplicated} already stored), retrying ${retrying}, failed ${failed}, ${formatBytes(bytes)} written\n`,
          );
          if (retrying > 0) process.stdout.write('retrying photos are tried again later; `vinhistory media status` lists the latest failures\n');
          if (failed > 0) process.stdout.write('failed photos were given up on; `vinhistory media archive --retry-failed` tries them again\n');
        }
        if (stop.signal.aborted) throw new CliError('interrupted: run the same command again to go on', EXIT_INTERRUPTED);
      } finally {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
      }
    });

  media
    .command('delete')
    .description("delete a lot's archived photos (a takedown): they are not archived again, answers show the original URLs")
    .requiredOption('--lot <auction:lot_id>', 'the lot, such as copart:34917760', parseLotKey)
    .action(async (options: { lot: { auction: string; lotId: number } }) => {
      const outcome = await withDatabase(({ services }) => services.media.removeLot(options.lot.auction, options.lot.lotId));
      if (outcome.kind === 'archive_off') throw new CliError(ARCHIVE_OFF);
      if (outcome.kind === 'not_found') throw new CliError(`no lot ${options.lot.auction}:${options.lot.lotId}`);
      process.stdout.write(`removed ${outcome.images} photos of ${options.lot.auction}:${options.lot.lotId} from the archive; ${outcome.filesDeleted} files deleted\n`);
    });
}
