import { InvalidArgumentError, Option, type Command } from 'commander';
import { formatCents } from '../../billing/pricing.ts';
import type { BillingCycle } from '../../domain/principal.ts';
import { CliError } from '../cli-error.ts';
import { withDatabase } from '../database.ts';
import { parseEmail, parsePlanCode, parsePositiveInteger } from '../options.ts';
import { cliActor, unwrap } from '../operator.ts';

const DAY_MS = 24 * 60 * 60 * 1000;
const MAX_EXTENSION_DAYS = 3660;

/** YYYY-MM-DD (the end of that day, UTC) or a full ISO 8601 time. */
function parseUntil(text: string): Date {
  const value = text.trim();
  const date = /^\d{4}-\d{2}-\d{2}$/.test(value) ? new Date(`${value}T23:59:59.999Z`) : /^\d{4}-\d{2}-\d{2}T/.test(value) ? new Date(value) : new Date(NaN);
  if (Number.isNaN(date.getTime())) throw new InvalidArgumentError('Expected a date such as 2027-01-31, or an ISO 8601 time.');
  return date;
}

export function registerSubscriptionsCommands(program: Command): void {
  const subscriptions = program.command('subscriptions').description('manage subscriptions');

  const end = (verb: string) => async (options: { email: string }) => {
    await withDatabase(async ({ services }) => {
      const outcome = await services.operations.end(cliActor(), options.email);
      if (outcome.kind === 'refused' && outcome.message.endsWith('no subscription to end.')) throw new CliError(`${options.email} has no subscription to ${verb === 'ended' ? 'end' : 'cancel'}.`);
      const { ended, count, at } = unwrap(outcome);
      const what = ended ? `the ${ended.planCode} subscription (${ended.id})` : `${count} scheduled subscription(s)`;
      process.stdout.write(`${verb} ${what} of ${options.email} as of ${at.toISOString()}\n`);
    });
  };

  subscriptions
    .command('end')
    .description("end an account's subscription now (and stop its billing at Stripe): its tokens answer 402 from the next request")
    .requiredOption('--email <email>', 'email of the account', parseEmail)
    .action(end('ended'));

  subscriptions
    .command('cancel')
    .description('the same as `subscriptions end` (its former name)')
    .requiredOption('--email <email>', 'email of the account', parseEmail)
    .action(end('cancelled'));

  subscriptions
    .command('change')
    .description("move an account to another plan or billing period now (starts one if none is in force); invoiced as docs/operators.md says")
    .requiredOption('--email <email>', 'email of the account', parseEmail)
    .requiredOption('--plan <code>', 'plan code (see `plans list`)', parsePlanCode)
    .addOption(new Option('--billing <period>', 'billing period (default: the current one; monthly for a new subscription)').choices(['monthly', 'annual']))
    .action(async (options: { email: string; plan: string; billing?: BillingCycle }) => {
      await withDatabase(async ({ services }) => {
        const { change } = unwrap(await services.operations.changePlan(cliActor(), options.email, options.plan, options.billing));
        if (change.kind === 'started') {
          process.stdout.write(`started subscription ${change.subscription.id} of ${options.email}: plan ${change.plan.code}, ${change.subscription.billing} billing, from ${change.subscription.startedAt}\n`);
          return;
        }
        process.stdout.write(`${options.email} moved from ${change.from.code} to ${change.plan.code} (${change.subscription.billing} billing) from now\n`);
        if (change.invoice) {
          process.stdout.write(`upgrade invoice ${change.invoice.id} (${change.invoice.reference}) issued: ${formatCents(change.invoice.amountCents)}, open\n`);
        } else if (change.provider === 'operator') {
          process.stdout.write('nothing invoiced: the subscription is arranged with the operator\n');
        }
      });
    });

  subscriptions
    .command('extend')
    .description('move the end of the subscription in force to a later date (nothing is invoiced)')
    .requiredOption('--email <email>', 'email of the account', parseEmail)
    .option('--until <date>', 'the new end: YYYY-MM-DD (end of that day, UTC) or an ISO 8601 time', parseUntil)
    .option('--days <n>', `days to add to the current end (at most ${MAX_EXTENSION_DAYS})`, parsePositiveInteger)
    .action(async (options: { email: string; until?: Date; days?: number }, command: Command) => {
      if ((options.until === undefined) === (options.days === undefined)) command.error('error: give either --until <date> or --days <n>', { exitCode: 2 });
      if (options.days !== undefined && options.days > MAX_EXTENSION_DAYS) throw new CliError(`--days is at most ${MAX_EXTENSION_DAYS}.`, 2);
      await withDatabase(async ({ services }) => {
        let until = options.until;
        if (until === undefined) {
          const { account } = unwrap(await services.operations.showAccount(options.email));
          const current = account.subscription?.endsAt;
          if (!current) throw new CliError(account.subscription ? 'The subscription has no end date: it runs until it is ended.' : `${options.email} has no subscription in force; start one with subscriptions change.`);
          until = new Date(Date.parse(current) + options.days! * DAY_MS);
        }
        const { subscription, previousEnd } = unwrap(await services.operations.extend(cliActor(), options.email, until));
        process.stdout.write(`subscription ${subscription.id} of ${options.email} now ends ${subscription.endsAt} (was ${previousEnd})\n`);
      });
    });
}
