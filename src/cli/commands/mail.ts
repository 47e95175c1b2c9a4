import type { Command } from 'commander';
import type { QueuedMail } from '../../domain/mail.ts';
import { CliError } from '../cli-error.ts';
import { withDatabase } from '../database.ts';
import { parsePositiveInteger } from '../options.ts';
import { formatTable } from '../table.ts';

const MAX_LIST = 1000;
const when = (iso: string | null) => (iso ? iso.slice(0, 19).replace('T', ' ') : '');

/**
 * The mail queue for the operator: how much account mail waits, retries or was given up, and why.
 * The server's mail worker sends it (docs/mail.md); this command only looks.
 */
export function registerMailCommands(program: Command): void {
  const mail = program.command('mail').description('account mail: the queue the server sends from');

  mail
    .command('status')
    .description('count queued, retrying, sent, skipped and failed messages, and list those retrying or given up (oldest first)')
    .option('--limit <n>', `how many retrying and failed messages to list (at most ${MAX_LIST})`, parsePositiveInteger, 20)
    .option('--json', 'print the counts and the lists as JSON')
    .action(async (options: { limit: number; json?: boolean }) => {
      if (options.limit > MAX_LIST) throw new CliError(`--limit is at most ${MAX_LIST}.`, 2);
      const { summary, retrying, failed, transport } = await withDatabase(async ({ services }) => ({
        summary: await services.mail.summary(),
        retrying: await services.mail.list('retrying', options.limit),
        failed: await services.mail.list('failed', options.limit),
        transport: services.mailDelivery.transportKind,
      }));
      if (options.json) {
        const row = (m: QueuedMail) => ({ id: m.id, kind: m.kind, to: m.recipient, attempts: m.attempts, queued_at: m.createdAt, next_attempt_at: m.nextAttemptAt, failed_at: m.failedAt, last_error: m.lastError });
        process.stdout.write(`${JSON.stringify({ ...summary, transport, retrying_messages: retrying.map(row), failed_messages: failed.map(row) })}\n`);
        return;
      }
      const lines = [
        `transport: ${transport === 'smtp' ? 'SMTP (SMTP_URL)' : 'the outbox folder, DATA_DIR/outbox (SMTP_URL is not set)'}`,
        `queued:    ${summary.queued}${summary.queued > 0 ? ` (${summary.retrying} retrying after a failure; oldest queued ${when(summary.oldestQueuedAt)} UTC)` : ''}`,
        `sent:      ${summary.sent}`,
        `skipped:   ${summary.skipped} (nothing to send: no account has the address)`,
        `failed:    ${summary.failed} (given up)`,
      ];
      process.stdout.write(`${lines.join('\n')}\n`);
      const table = (title: string, rows: QueuedMail[], last: (m: QueuedMail) => string, lastHeader: string) => {
        if (rows.length === 0) return;
        process.stdout.write(`\n${title}\n`);
        process.stdout.write(
          formatTable(
            [{ header: 'ID' }, { header: 'KIND' }, { header: 'TO' }, { header: 'ATTEMPTS', align: 'right' }, { header: 'QUEUED' }, { header: lastHeader }, { header: 'LAST ERROR' }],
            rows.map((m) => [m.id, m.kind, m.recipient, String(m.attempts), when(m.createdAt), last(m), (m.lastError ?? '').slice(0, 120)]),
          ),
        );
      };
      table('Retrying:', retrying, (m) => when(m.nextAttemptAt), 'NEXT ATTEMPT');
      table('Failed:', failed, (m) => when(m.failedAt), 'GIVEN UP');
    });
}
