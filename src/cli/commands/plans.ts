import type { Command } from 'commander';
import { formatCents } from '../../billing/pricing.ts';
import { cliActor } from '../operator.ts';
import { CliError } from '../cli-error.ts';
import { withDatabase } from '../database.ts';
import { parseName, parseNonNegativeInteger, parsePlanCode, parsePositiveInteger } from '../options.ts';
import { formatTable } from '../table.ts';
import { DEFAULT_WATCH_LIMIT } from '../../domain/plan.ts';

interface CreatePlanOptions {
  code: string;
  name: string;
  quota: number;
  rate: number;
  priceCents: number;
  annualPriceCents?: number;
  watches?: number;
}

export function registerPlansCommands(program: Command): void {
  const plans = program.command('plans').description('list plans, add custom (enterprise) plans');

  plans
    .command('create')
    .description('add a custom plan; it is not on the public price list, and accounts get it with `accounts create --plan`')
    .requiredOption('--code <code>', 'plan code: lower-case letters, digits, - and _ (such as acme-enterprise)', parsePlanCode)
    .requiredOption('--name <name>', 'name shown to the customer', parseName)
    .requiredOption('--quota <n>', 'searches per month (a positive whole number)', parsePositiveInteger)
    .requiredOption('--rate <n>', 'searches per second (a positive whole number)', parsePositiveInteger)
    .requiredOption('--price-cents <n>', 'monthly price in US cents (5000 = $50.00)', parseNonNegativeInteger)
    .option('--annual-price-cents <n>', 'annual price in US cents (default: 12 x the monthly price)', parseNonNegativeInteger)
    .option('--watches <n>', `watches an account may hold (default: ${DEFAULT_WATCH_LIMIT}, the Standard plan's)`, parseNonNegativeInteger)
    .action(async (options: CreatePlanOptions) => {
      await withDatabase(async ({ services }) => {
        const outcome = await services.plans.create({
          code: options.code,
          name: options.name,
          monthlyQuota: options.quota,
          ratePerSecond: options.rate,
          monthlyPriceCents: options.priceCents,
          ...(options.annualPriceCents !== undefined ? { annualPriceCents: options.annualPriceCents } : {}),
          ...(options.watches !== undefined ? { watchLimit: options.watches } : {}),
        });
        if (outcome.kind === 'code-taken') throw new CliError(`A plan with code "${options.code}" already exists.`);
        const { plan } = outcome;
        await services.operations.record(cliActor(), 'plan.create', plan.code, {
          name: plan.name,
          monthly_quota: plan.monthlyQuota,
          rate_per_second: plan.ratePerSecond,
          monthly_price_cents: plan.monthlyPriceCents,
          annual_price_cents: plan.annualPriceCents,
          watch_limit: plan.watchLimit,
        });
        process.stdout.write(
          `created plan ${plan.code} (${plan.name}): ${plan.monthlyQuota} searches/month, ${plan.ratePerSecond}/second, ` +
            `${formatCents(plan.monthlyPriceCents)}/month or ${formatCents(plan.annualPriceCents)}/year, ${plan.watchLimit} watches\n`,
        );
      });
    });

  plans
    .command('list')
    .description('show every plan: the public price list first, then custom plans')
    .action(async () => {
      await withDatabase(async ({ services }) => {
        const rows = (await services.plans.list()).map((plan) => [
          plan.code,
          plan.name,
          String(plan.monthlyQuota),
          String(plan.ratePerSecond),
          formatCents(plan.monthlyPriceCents),
          formatCents(plan.annualPriceCents),
          String(plan.watchLimit),
          plan.isPublic ? (plan.isFavourite ? 'public, favourite' : 'public') : 'custom',
        ]);
        process.stdout.write(
          formatTable(
            [
              { header: 'CODE' },
              { header: 'NAME' },
              { header: 'SEARCHES/MONTH', align: 'right' },
              { header: 'PER SECOND', align: 'right' },
              { header: 'MONTHLY', align: 'right' },
              { header: 'ANNUAL', align: 'right' },
              { header: 'WATCHES', align: 'right' },
              { header: 'LISTING' },
            ],
            rows,
          ),
        );
      });
    });
}
