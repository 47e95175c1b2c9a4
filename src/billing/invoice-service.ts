import type { Invoice } from '../domain/invoice.ts';
import type { Plan } from '../domain/plan.ts';
import type { Db } from '../storage/database.ts';
import type { InvoiceListFilter } from '../storage/repositories/invoices-repository.ts';
import type { Repositories } from '../storage/repositories/index.ts';
import { payManualInvoice, voidManualInvoice, type Settlement } from './manual-invoices.ts';
import { BANK_DETAILS_SETTING } from './manual-provider.ts';

/** One invoice as its page shows it: with its plan (if it still exists) and where to pay. */
export interface InvoiceDetails {
  invoice: Invoice;
  plan: Plan | null;
  bankDetails: string | null;
}

/** Invoices: the customer's invoice page, and the operator's list, payments and bank details. */
export class InvoiceService {
  constructor(private readonly options: { db: Db; repos: Repositories }) {}

  private get repos(): Repositories {
    return this.options.repos;
  }

  /** One invoice of one account: an id alone never shows another customer's invoice. */
  async forAccount(accountId: string, invoiceId: string): Promise<InvoiceDetails | null> {
    const invoice = await this.repos.invoices.findForAccount(accountId, invoiceId);
    if (!invoice) return null;
    const [plan, bankDetails] = await Promise.all([this.repos.plans.findByCode(invoice.planCode), this.bankDetails()]);
    return { invoice, plan: plan ?? null, bankDetails };
  }

  /** For the operator: newest first, with the customer's email. */
  list(filter: InvoiceListFilter = {}): Promise<(Invoice & { email: string })[]> {
    return this.repos.invoices.list(filter);
  }

  /** Marks a manual invoice paid and applies it (see payManualInvoice). */
  pay(idOrReference: string, now = new Date()): Promise<Settlement> {
    return payManualInvoice(this.options.db, idOrReference, now);
  }

  void(idOrReference: string, now = new Date()): Promise<Invoice> {
    return voidManualInvoice(this.options.db, idOrReference, now);
  }

  /** The bank details printed on open invoices, or null when the operator has set none. */
  async bankDetails(): Promise<string | null> {
    return (await this.repos.settings.get(BANK_DETAILS_SETTING)) ?? null;
  }

  /** Sets the bank details, or removes them with null. */
  async setBankDetails(text: string | null, now = new Date()): Promise<void> {
    if (text === null) await this.repos.settings.delete(BANK_DETAILS_SETTING);
    else await this.repos.settings.set(BANK_DETAILS_SETTING, text, now);
  }
}
