import { Option, type Command } from 'commander';
import type { SubscriptionRow } from '../../storage/schema.ts';
import { CliError } from '../cli-error.ts';
import { inTransaction, withDatabase } from '../database.ts';
import { parseEmail, parsePlanCode } from '../options.ts';

interface CreateAccountOptions {
  email: string;
  plan: string;
  billing: SubscriptionRow['billing'];
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
      await withDatabase(async ({ db, repos }) => {
        const plan = await repos.plans.findByCode(options.plan);
        if (!plan) {
          const known = (await repos.plans.list()).map((p) => p.code).join(', ');
          throw new CliError(`No plan with code "${options.plan}". Known plans: ${known}.`);
        }
        if (await repos.accounts.findByEmail(options.email)) {
          throw new CliError(`An account with email ${options.email} already exists.`);
        }
        const now = new Date();
        const created = await inTransaction(db, async (trx) => {
          const account = await trx.accounts.create(options.email, now);
          const subscription = await trx.subscriptions.create(
            { accountId: account.id, planCode: plan.code, billing: options.billing, startedAt: now },
            now,
          );
          return { account, subscription };
        }).catch((error: unknown) => {
          if (db.isUniqueViolation(error)) throw new CliError(`An account with email ${options.email} already exists.`);
          throw error;
        });
        process.stdout.write(
          `created account ${created.account.id} for ${created.account.email}\n` +
            `subscription ${created.subscription.id}: plan ${plan.code} (${plan.name}), ${options.billing} billing, ` +
            `in force from ${created.subscription.started_at}\n`,
        );
      });
    });
}
