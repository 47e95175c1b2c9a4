import { text } from 'node:stream/consumers';
import type { Command } from 'commander';
import { looksLikeApiToken } from '../../domain/api-token.ts';
import { tokenJson } from '../../operations/json.ts';
import { CliError } from '../cli-error.ts';
import { withDatabase } from '../database.ts';
import { parseEmail, parseName } from '../options.ts';
import { cliActor, printJson, unwrap } from '../operator.ts';
import { formatTable } from '../table.ts';

interface CreateTokenOptions {
  email: string;
  name: string;
  test?: boolean;
}

const TOKEN_ID = /^tok_[0-9a-z]{16}$/;

export function registerTokensCommands(program: Command): void {
  const tokens = program.command('tokens').description('issue, list and revoke API tokens');

  tokens
    .command('create')
    .description('issue an API token for an account; prints the token alone on stdout (TOKEN=$(vinhistory tokens create --email x))')
    .requiredOption('--email <email>', 'email of the account', parseEmail)
    .option('--name <name>', 'a label to tell tokens apart', parseName, 'default')
    .option('--test', 'a sandbox token (vh_test_...): searches only the sandbox catalogue, never counted, no plan needed')
    .action(async (options: CreateTokenOptions) => {
      await withDatabase(async ({ services }) => {
        const outcome = await services.operations.issueToken(cliActor(), options.email, options.name, options.test ? 'test' : 'live');
        if (outcome.kind === 'not-found') throw new CliError(`No account with email ${options.email}.`);
        const { account, secret } = unwrap(outcome);
        // stdout carries the token and nothing else, so that a script can capture it whole.
        process.stdout.write(`${secret}\n`);
        // A test token works without a plan: nothing to warn about.
        if (!options.test && !(await services.payments.billing.inForce(account.id))) {
          process.stderr.write(`warning: ${options.email} has no subscription in force; searches with this token will answer 402.\n`);
        }
      });
    });

  tokens
    .command('list')
    .description("an account's tokens, newest first: id, name, kind, hint (the first characters), last use; never the secret")
    .requiredOption('--email <email>', 'email of the account', parseEmail)
    .option('--json', 'print them as JSON')
    .action(async (options: { email: string; json?: boolean }) => {
      await withDatabase(async ({ services }) => {
        const { tokens: list } = unwrap(await services.operations.listTokens(options.email));
        if (options.json) return printJson({ tokens: list.map(tokenJson) });
        if (list.length === 0) {
          process.stdout.write('no tokens\n');
          return;
        }
        process.stdout.write(
          formatTable(
            [{ header: 'id' }, { header: 'name' }, { header: 'kind' }, { header: 'hint' }, { header: 'created' }, { header: 'last used' }, { header: 'state' }],
            list.map((token) => [
              token.id,
              token.name,
              token.kind,
              `${token.displayPrefix}...`,
              token.createdAt.slice(0, 10),
              token.lastUsedAt?.slice(0, 10) ?? '',
              token.revokedAt ? `revoked ${token.revokedAt.slice(0, 10)}` : token.expiresAt ? `expires ${token.expiresAt.slice(0, 16)}` : 'live',
            ]),
          ),
        );
      });
    });

  tokens
    .command('revoke')
    .description('revoke an API token at once (its next request answers 401), by its id or its secret (- reads the secret from stdin)')
    .option('--id <id>', 'the token id (tok_..., from `tokens list`)')
    .option('--token <token>', 'the token (vh_live_... or vh_test_...), or - to read it from stdin and keep it out of the process list')
    .action(async (options: { token?: string; id?: string }, command: Command) => {
      // A usage error of commander's own: exit 2 with the usage hint, as a missing option is.
      if ((options.id === undefined) === (options.token === undefined)) command.error('error: give either --id <id> or --token <token>', { exitCode: 2 });
      if (options.id !== undefined) {
        const id = options.id.trim();
        if (!TOKEN_ID.test(id)) throw new CliError('--id: expected a token id such as tok_0123456789abcdef.', 2);
        await withDatabase(async ({ services }) => {
          const { token } = unwrap(await services.operations.revokeToken(cliActor(), id));
          process.stdout.write(`token ${token.id} (${token.name}) revoked\n`);
        });
        return;
      }
      const token = (options.token === '-' ? await text(process.stdin) : options.token!).trim();
      // The value is never echoed: a mistyped token is still mostly a secret.
      if (!looksLikeApiToken(token)) throw new CliError('That is not a vinhistory API token (expected vh_live_ or vh_test_ followed by 32 letters and digits).', 2);
      await withDatabase(async ({ services }) => {
        if (!(await services.operations.revokeTokenBySecret(cliActor(), token))) throw new CliError('No live token matches: it is unknown or already revoked.');
        process.stdout.write('token revoked\n');
      });
    });
}
