import type { Command } from 'commander';
import { CliError } from '../cli-error.ts';
import { withDatabase } from '../database.ts';
import { asCliError } from '../payment-refusal.ts';
import { parseEmail } from '../options.ts';

export function registerSubscriptionsCommands(program: Command): void {
  const subscriptions = program.command('subscriptions').description('manage subscriptions');

  subscriptions
    .command('cancel')
    .description("end an account's subscription now (and stop its billing at Stripe): its tokens answer 402 from the next request")
    .requiredOption('--email <email>', 'email of the account', parseEmail)
    .action(async (options: { email: string }) => {
      await withDatabase(async ({ services }) => {
        const account = await services.accounts.findByEmail(options.email);
        if (!account) throw new CliError(`No account with email ${options.email}.`);
        const now = new Date();
        const { ended, count } = await asCliError(() => services.payments.billing.endNow(account, now));
        if (count === 0) throw new CliError(`${options.email} has no subscription to cancel.`);
        const what = ended ? `the ${ended.planCode} subscription (${ended.id})` : `${count} scheduled subscription(s)`;
        process.stdout.write(`cancelled ${what} of ${options.email} as of ${now.toISOString()}\n`);
      });
    });
}
