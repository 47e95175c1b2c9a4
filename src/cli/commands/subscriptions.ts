import type { Command } from 'commander';
import { CliError } from '../cli-error.ts';
import { inTransaction, withDatabase } from '../database.ts';
import { parseEmail } from '../options.ts';

export function registerSubscriptionsCommands(program: Command): void {
  const subscriptions = program.command('subscriptions').description('manage subscriptions');

  subscriptions
    .command('cancel')
    .description("end an account's subscription now: its tokens answer 402 from the next request")
    .requiredOption('--email <email>', 'email of the account', parseEmail)
    .action(async (options: { email: string }) => {
      await withDatabase(async ({ db, repos }) => {
        const account = await repos.accounts.findByEmail(options.email);
        if (!account) throw new CliError(`No account with email ${options.email}.`);
        const now = new Date();
        const { active, ended } = await inTransaction(db, async (trx) => ({
          active: await trx.subscriptions.findActive(account.id, now),
          ended: await trx.subscriptions.cancelActive(account.id, now),
        }));
        if (ended === 0) throw new CliError(`${options.email} has no subscription to cancel.`);
        const what = active ? `the ${active.plan_code} subscription (${active.id})` : `${ended} scheduled subscription(s)`;
        process.stdout.write(`cancelled ${what} of ${options.email} as of ${now.toISOString()}\n`);
      });
    });
}
