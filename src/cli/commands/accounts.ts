import { Option, type Command } from 'commander';
import type { BillingCycle } from '../../domain/principal.ts';
import { CliError } from '../cli-error.ts';
import { withDatabase } from '../database.ts';
import { parseEmail, parsePlanCode } from '../options.ts';

interface CreateAccountOptions {
  email: string;
  plan: string;
  billing: BillingCycle;
}

export function registerAccountsCommands(program: Command): void {
  const accounts = program.command('accounts').description('manage customer accounts');

  accounts
    .command('create')
    .description('create an account with a subscription in force from now (payment is settled outside the service)')
    .requiredOption('--email <email>', "the customer's email address (case is ignored)", parseEmail)
    .requiredOption('--plan <code>', 'plan code (see `plans list`)', parsePlanCode)
    .addOption(new Option('--billing <period>', 'billing period of the subscription').choices(['monthly', 'annual']).default('monthly'))
    .action(async (options: CreateAccountOptions) => {
      await withDatabase(async ({ services }) => {
        const outcome = await services.payments.billing.arrangeNewAccount({ email: options.email, planCode: options.plan, billing: options.billing });
        if (outcome.kind === 'unknown-plan') throw new CliError(`No plan with code "${options.plan}". Known plans: ${outcome.knownCodes.join(', ')}.`);
        if (outcome.kind === 'email-taken') throw new CliError(`An account with email ${options.email} already exists.`);
        const { account, subscription, plan } = outcome;
        process.stdout.write(
          `created account ${account.id} for ${account.email}\n` +
            `subscription ${subscription.id}: plan ${plan.code} (${plan.name}), ${options.billing} billing, ` +
            `in force from ${subscription.startedAt}\n`,
        );
      });
    });
}
