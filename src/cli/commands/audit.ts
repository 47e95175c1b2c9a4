import type { Command } from 'commander';
import { auditJson } from '../../operations/json.ts';
import { MAX_PAGE } from '../../operations/operator-service.ts';
import { CliError } from '../cli-error.ts';
import { withDatabase } from '../database.ts';
import { parsePositiveInteger } from '../options.ts';
import { noteNextPage, printJson, unwrap } from '../operator.ts';
import { formatTable } from '../table.ts';

/** The operators' audit log (docs/operators.md): every change made from the CLI or the admin API. */
export function registerAuditCommand(program: Command): void {
  program
    .command('audit')
    .description('what operators changed, newest first: when, who (operator token or cli:<user>), what, on which target')
    .option('--limit <n>', `entries per page (at most ${MAX_PAGE})`, parsePositiveInteger, 50)
    .option('--cursor <cursor>', 'the next page, as the previous one printed it')
    .option('--target <id>', 'only the entries about this account, token or invoice id')
    .option('--json', 'print the page as JSON: {"entries": [...], "next_cursor": ...}')
    .action(async (options: { limit: number; cursor?: string; target?: string; json?: boolean }) => {
      if (options.limit > MAX_PAGE) throw new CliError(`--limit is at most ${MAX_PAGE}.`, 2);
      await withDatabase(async ({ services }) => {
        const { page } = unwrap(
          await services.operations.auditPage({
            limit: options.limit,
            ...(options.cursor !== undefined ? { cursor: options.cursor } : {}),
            ...(options.target !== undefined ? { target: options.target.trim() } : {}),
          }),
        );
        if (options.json) return printJson({ entries: page.items.map(auditJson), next_cursor: page.nextCursor });
        if (page.items.length === 0) {
          process.stdout.write('no entries\n');
          return;
        }
        process.stdout.write(
          formatTable(
            [{ header: 'at' }, { header: 'who' }, { header: 'action' }, { header: 'target' }, { header: 'details' }],
            page.items.map((entry) => [entry.at.slice(0, 19).replace('T', ' '), entry.actor, entry.action, entry.target, JSON.stringify(entry.details)]),
          ),
        );
        noteNextPage(page.nextCursor);
      });
    });
}
