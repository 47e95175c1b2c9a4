import { text } from 'node:stream/consumers';
import type { Command } from 'commander';
import { looksLikeOperatorToken, operatorTokenDisplayPrefix } from '../../domain/operator-token.ts';
import { CliError } from '../cli-error.ts';
import { cliActor } from '../operator.ts';
import { withDatabase } from '../database.ts';
import { parseName } from '../options.ts';
import { formatTable } from '../table.ts';

/**
 * Tokens of the admin API (POST /admin/v1/lots, for scrapers and partners that push lots). Not
 * customer tokens: they belong to no account, have no plan, and open only the admin routes.
 */
export function registerOperatorTokensCommands(program: Command): void {
  const tokens = program.command('operator-tokens').description('issue, list and revoke operator tokens of the admin API (lot ingestion over HTTP)');

  tokens
    .command('create')
    .description('issue an operator token; prints the token alone on stdout (TOKEN=$(vinhistory operator-tokens create --name x))')
    .requiredOption('--name <name>', 'who or what uses it, to tell tokens apart (e.g. "copart scraper")', parseName)
    .action(async (options: { name: string }) => {
      await withDatabase(async ({ services }) => {
        const { token, secret } = await services.operatorTokens.issue(options.name);
        await services.operations.record(cliActor(), 'operator_token.create', token.id, { name: token.name });
        // stdout carries the token and nothing else, so that a script can capture it whole.
        process.stdout.write(`${secret}\n`);
      });
    });

  tokens
    .command('list')
    .description('list operator tokens (never the secrets), newest first')
    .option('--json', 'print the list as JSON')
    .action(async (options: { json?: boolean }) => {
      const rows = await withDatabase(({ services }) => services.operatorTokens.list());
      if (options.json) {
        process.stdout.write(
          `${JSON.stringify(rows.map((row) => ({ id: row.id, name: row.name, prefix: row.displayPrefix, created_at: row.createdAt, last_used_at: row.lastUsedAt, revoked_at: row.revokedAt })))}\n`,
        );
        return;
      }
      if (rows.length === 0) {
        process.stdout.write('no operator tokens (create one with: vinhistory operator-tokens create --name <name>)\n');
        return;
      }
      process.stdout.write(
        formatTable(
          [{ header: 'ID' }, { header: 'NAME' }, { header: 'TOKEN' }, { header: 'CREATED' }, { header: 'LAST USED' }, { header: 'STATUS' }],
          rows.map((row) => [
            row.id,
            row.name,
            `${row.displayPrefix}...`,
            row.createdAt.slice(0, 16).replace('T', ' '),
            row.lastUsedAt ? row.lastUsedAt.slice(0, 16).replace('T', ' ') : 'never',
            row.revokedAt ? `revoked ${row.revokedAt.slice(0, 10)}` : 'live',
          ]),
        ),
      );
    });

  tokens
    .command('revoke')
    .description('revoke an operator token at once (its next request answers 401); by the token itself, or by its id from list')
    .option('--token <token>', 'the token (vh_op_...), or - to read it from stdin and keep it out of the process list')
    .option('--id <id>', 'the token id shown by list (optok_...)')
    .action(async (options: { token?: string; id?: string }) => {
      if ((options.token === undefined) === (options.id === undefined)) throw new CliError('Give exactly one of --token or --id.', 2);
      if (options.id !== undefined) {
        const id = options.id.trim();
        await withDatabase(async ({ services }) => {
          if (!(await services.operatorTokens.revokeById(id))) throw new CliError(`No live operator token has the id ${id}: it is unknown or already revoked.`);
          await services.operations.record(cliActor(), 'operator_token.revoke', id, {});
        });
        process.stdout.write('operator token revoked\n');
        return;
      }
      const token = (options.token === '-' ? await text(process.stdin) : options.token!).trim();
      // The value is never echoed: a mistyped token is still mostly a secret.
      if (!looksLikeOperatorToken(token)) throw new CliError('That is not a vinhistory operator token (expected vh_op_ followed by 32 letters and digits).', 2);
      await withDatabase(async ({ services }) => {
        if (!(await services.operatorTokens.revokeBySecret(token))) throw new CliError('No live operator token matches: it is unknown or already revoked.');
        // The secret is never recorded: the entry names the token by the prefix `list` shows.
        await services.operations.record(cliActor(), 'operator_token.revoke', `${operatorTokenDisplayPrefix(token)}...`, { by: 'secret' });
      });
      process.stdout.write('operator token revoked\n');
    });
}
