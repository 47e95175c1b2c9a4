import { Option, type Command } from 'commander';
import { formatCents } from '../../billing/pricing.ts';
import type { InvoiceStatus } from '../../domain/invoice.ts';
import { CliError } from '../cli-error.ts';
import { withDatabase } from '../database.ts';
import { parseEmail, parsePositiveInteger } from '../options.ts';
import { MAX_PAGE } from '../../operations/operator-service.ts';
import { invoiceJson } from '../../operations/json.ts';
import { cliActor, noteNextPage, printJson, unwrap } from '../operator.ts';
import { formatTable } from '../table.ts';

interface ListOptions {
  email?: string;
  status?: InvoiceStatus;
  limit: number;
  cursor?: string;
  json?: boolean;
}

export function registerInvoicesCommands(program: Command): void {
  const invoices = program.command('invoices').description('manual invoices (bank transfer): list them, mark them paid');

  invoices
    .command('list')
    .description('list invoices, newest first')
    .option('--email <email>', 'only the invoices of this account', parseEmail)
    .addOption(new Option('--status <status>', 'only invoices in this state').choices(['open', 'paid', 'void']))
    .option('--limit <n>', `invoices per page (at most ${MAX_PAGE})`, parsePositiveInteger, MAX_PAGE)
    .option('--cursor <cursor>', 'the next page, as the previous one printed it')
    .option('--json', 'print the page as JSON: {"invoices": [...], "next_cursor": ...}')
    .action(async (options: ListOptions) => {
      if (options.limit > MAX_PAGE) throw new CliError(`--limit is at most ${MAX_PAGE}.`, 2);
      await withDatabase(async ({ services }) => {
        const { page } = unwrap(
          await services.operations.listInvoices({
            limit: options.limit,
            ...(options.email !== undefined ? { email: options.email } : {}),
            ...(options.status !== undefined ? { status: options.status } : {}),
            ...(options.cursor !== undefined ? { cursor: options.cursor } : {}),
          }),
        );
        const rows = page.items;
        if (options.json) return printJson({ invoices: rows.map(invoiceJson), next_cursor: page.nextCursor });
        if (rows.length === 0) {
          process.stdout.write('no invoices\n');
          return;
        }
        process.stdout.write(
          formatTable(
            [{ header: 'id' }, { header: 'reference' }, { header: 'email' }, { header: 'kind' }, { header: 'plan' }, { header: 'amount', align: 'right' }, { header: 'status' }, { header: 'issued' }, { header: 'paid' }],
            rows.map((row) => [
              row.id,
              row.reference,
              row.email,
              row.kind,
              `${row.planCode} (${row.billing})`,
              formatCents(row.amountCents),
              `${row.status}${row.provider === 'stripe' ? ' (stripe)' : ''}`,
              row.createdAt.slice(0, 10),
              row.paidAt?.slice(0, 10) ?? '',
            ]),
          ),
        );
        noteNextPage(page.nextCursor);
      });
    });

  invoices
    .command('pay')
    .description('record the payment of a manual invoice and apply it: starts, renews or upgrades the plan at once')
    .argument('<id>', 'invoice id (inv_...) or the reference the customer quoted (VH-XXXX-XXXX)')
    .action(async (id: string) => {
      await withDatabase(async ({ services }) => {
        const { settlement } = unwrap(await services.operations.payInvoice(cliActor(), id));
        process.stdout.write(
          `invoice ${settlement.invoice.id} (${settlement.invoice.reference}) paid: ${formatCents(settlement.invoice.amountCents)}\n${settlement.summary}\n`,
        );
      });
    });

  invoices
    .command('void')
    .description('cancel an open invoice (the customer will not pay it, or it can no longer apply)')
    .argument('<id>', 'invoice id (inv_...) or reference (VH-XXXX-XXXX)')
    .action(async (id: string) => {
      await withDatabase(async ({ services }) => {
        const { invoice } = unwrap(await services.operations.voidInvoice(cliActor(), id));
        process.stdout.write(`invoice ${invoice.id} (${invoice.reference}) is void\n`);
      });
    });

  invoices
    .command('payee')
    .description('show, set or (with --clear) remove the bank details printed on every open invoice')
    .argument('[details]', 'e.g. "Acme Data Ltd, IBAN GB33 BUKB 2020 1555 5555 55, BIC BUKBGB22"')
    .option('--clear', 'remove the bank details')
    .action(async (details: string | undefined, options: { clear?: boolean }) => {
      await withDatabase(async ({ services }) => {
        if (options.clear) {
          await services.operations.setBankDetails(cliActor(), null);
          process.stdout.write('bank details removed\n');
          return;
        }
        if (details === undefined) {
          const current = await services.invoices.bankDetails();
          process.stdout.write(current ? `${current}\n` : 'no bank details set; invoices ask the customer to use the details in their contract\n');
          return;
        }
        const text = details.trim();
        if (text.length === 0 || text.length > 500) throw new CliError('Give the bank details as 1 to 500 characters.', 2);
        await services.operations.setBankDetails(cliActor(), text);
        process.stdout.write('bank details set; open invoices show them now\n');
      });
    });
}
