import { Option, type Command } from 'commander';
import type { BillingCycle } from '../../domain/principal.ts';
import { ACCOUNT_STATUSES, type AccountStatus } from '../../domain/operations.ts';
import type { AccountSummary } from '../../operations/operator-service.ts';
import { MAX_PAGE } from '../../operations/operator-service.ts';
import { CliError } from '../cli-error.ts';
import { withDatabase } from '../database.ts';
import { parseEmail, parsePlanCode, parsePositiveInteger } from '../options.ts';
import { cliActor, noteNextPage, printJson, unwrap } from '../operator.ts';
import { formatTable } from '../table.ts';
import { accountDetailsJson, accountJson } from '../../operations/json.ts';

interface CreateAccountOptions {
  email: string;
  plan: string;
  billing: BillingCycle;
}

interface ListOptions {
  email?: string;
  plan?: string;
  status?: AccountStatus;
  limit: number;
  cursor?: string;
  json?: boolean;
}

const day = (iso: string | null | undefined) => (iso ? iso.slice(0, 10) : '');

function parseEmailPart(text: string): string {
  const value = text.trim().toLowerCase();
  if (value.length === 0 || value.length > 254) throw new CliError('--email: give 1 to 254 characters of the address.', 2);
  return value;
}

function useCell(account: AccountSummary): string {
  return account.usage ? `${account.usage.used}/${account.usage.quota}` : '';
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
        const outcome = await services.operations.createAccount(cliActor(), { email: options.email, planCode: options.plan, billing: options.billing });
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

  accounts
    .command('list')
    .description("list accounts, newest first: email, status, plan and this period's use")
    .option('--email <text>', 'only addresses containing this text', parseEmailPart)
    .option('--plan <code>', 'only accounts whose plan in force is this one', parsePlanCode)
    .addOption(new Option('--status <status>', 'only accounts in this state').choices([...ACCOUNT_STATUSES]))
    .option('--limit <n>', `accounts per page (at most ${MAX_PAGE})`, parsePositiveInteger, 50)
    .option('--cursor <cursor>', 'the next page, as the previous one printed it')
    .option('--json', 'print the page as JSON: {"accounts": [...], "next_cursor": ...}')
    .action(async (options: ListOptions) => {
      if (options.limit > MAX_PAGE) throw new CliError(`--limit is at most ${MAX_PAGE}.`, 2);
      await withDatabase(async ({ services }) => {
        const { page } = unwrap(
          await services.operations.listAccounts({
            limit: options.limit,
            ...(options.email !== undefined ? { email: options.email } : {}),
            ...(options.plan !== undefined ? { plan: options.plan } : {}),
            ...(options.status !== undefined ? { status: options.status } : {}),
            ...(options.cursor !== undefined ? { cursor: options.cursor } : {}),
          }),
        );
        if (options.json) return printJson({ accounts: page.items.map(accountJson), next_cursor: page.nextCursor });
        if (page.items.length === 0) {
          process.stdout.write('no accounts\n');
          return;
        }
        process.stdout.write(
          formatTable(
            [{ header: 'id' }, { header: 'email' }, { header: 'status' }, { header: 'plan' }, { header: 'used', align: 'right' }, { header: 'ends' }, { header: 'created' }],
            page.items.map((account) => [
              account.id,
              account.email,
              account.status,
              account.subscription ? `${account.subscription.planCode} (${account.subscription.billing})` : '',
              useCell(account),
              day(account.subscription?.endsAt),
              day(account.createdAt),
            ]),
          ),
        );
        noteNextPage(page.nextCursor);
      });
    });

  accounts
    .command('show')
    .description('one account: its plan, billing, use, tokens (hints only) and latest invoices')
    .argument('<account>', 'email address or account id (acct_...)')
    .option('--json', 'print it as JSON')
    .action(async (idOrEmail: string, options: { json?: boolean }) => {
      await withDatabase(async ({ services }) => {
        const { account } = unwrap(await services.operations.showAccount(idOrEmail));
        if (options.json) return printJson(accountDetailsJson(account));
        const sub = account.subscription;
        const lines = [
          `account:  ${account.id} ${account.email}`,
          `status:   ${account.status}${account.deletedAt ? ` (deleted ${account.deletedAt})` : ''}`,
          `created:  ${account.createdAt}`,
          sub
            ? `plan:     ${sub.planCode}, ${sub.billing}, billed by ${account.provider}, since ${sub.startedAt}${sub.endsAt ? `, ends ${sub.endsAt}` : ''}${account.cancelAtPeriodEnd ? ' (cancelled at the end of the term)' : ''}`
            : 'plan:     none in force',
          account.usage ? `use:      ${account.usage.used} of ${account.usage.quota} searches this period (${day(account.usage.periodStart.toISOString())} to ${day(account.usage.resetsAt.toISOString())})` : null,
          `tokens:   ${account.tokens.length === 0 ? 'none' : account.tokens.map((token) => `${token.id} ${token.displayPrefix}... ${token.name}${token.revokedAt ? ' (revoked)' : ''}`).join('\n          ')}`,
          `invoices: ${account.invoices.length === 0 ? 'none' : account.invoices.map((invoice) => `${invoice.id} ${invoice.reference} ${invoice.kind} ${invoice.planCode} ${invoice.status}`).join('\n          ')}`,
        ];
        process.stdout.write(`${lines.filter((line) => line !== null).join('\n')}\n`);
      });
    });
}
