import { text } from 'node:stream/consumers';
import type { Command } from 'commander';
import { looksLikeApiToken } from '../../domain/api-token.ts';
import { CliError } from '../cli-error.ts';
import { withDatabase } from '../database.ts';
import { parseEmail, parseName } from '../options.ts';

interface CreateTokenOptions {
  email: string;
  name: string;
  test?: boolean;
}

export function registerTokensCommands(program: Command): void {
  const tokens = program.command('tokens').description('issue and revoke API tokens');

  tokens
    .command('create')
    .description('issue an API token for an account; prints the token alone on stdout (TOKEN=$(vinhistory tokens create --email x))')
    .requiredOption('--email <email>', 'email of the account', parseEmail)
    .option('--name <name>', 'a label to tell tokens apart', parseName, 'default')
    .option('--test', 'a sandbox token (vh_test_...): searches only the sandbox catalogue, never counted, no plan needed')
    .action(async (options: CreateTokenOptions) => {
      await withDatabase(async ({ services }) => {
        const account = await services.accounts.findByEmail(options.email);
        if (!account) throw new CliError(`No account with email ${options.email}.`);
        const { secret } = await services.apiTokens.issue(account.id, options.name, new Date(), options.test ? 'test' : 'live');
        // stdout carries the token and nothing else, so that a script can capture it whole.
        process.stdout.write(`${secret}\n`);
        // A test token works without a plan: nothing to warn about.
        if (!options.test && !(await services.payments.billing.inForce(account.id))) {
          process.stderr.write(`warning: ${options.email} has no subscription in force; searches with this token will answer 402.\n`);
        }
      });
    });

  tokens
    .command('revoke')
    .description('revoke an API token at once (its next request answers 401); pass - to read the token from stdin')
    .requiredOption('--token <token>', 'the token (vh_live_... or vh_test_...), or - to read it from stdin and keep it out of the process list')
    .action(async (options: { token: string }) => {
      const token = (options.token === '-' ? await text(process.stdin) : options.token).trim();
      // The value is never echoed: a mistyped token is still mostly a secret.
      if (!looksLikeApiToken(token)) throw new CliError('That is not a vinhistory API token (expected vh_live_ or vh_test_ followed by 32 letters and digits).', 2);
      await withDatabase(async ({ services }) => {
        if (!(await services.apiTokens.revokeBySecret(token))) throw new CliError('No live token matches: it is unknown or already revoked.');
        process.stdout.write('token revoked\n');
      });
    });
}
