import type { Db } from '../database.ts';
import type { InvoiceRow } from '../schema.ts';
import { newId, randomChars } from '../../domain/ids.ts';
import { normaliseEmail } from '../../domain/account.ts';
import type { Invoice, InvoiceKind, InvoiceStatus } from '../../domain/invoice.ts';

export function toInvoice(row: InvoiceRow): Invoice {
  return {
    id: row.id,
    reference: row.reference,
    accountId: row.account_id,
    provider: row.provider,
    kind: row.kind,
    planCode: row.plan_code,
    billing: row.billing,
    amountCents: row.amount_cents,
    currency: row.currency,
    description: row.description,
    subscriptionId: row.subscription_id,
    status: row.status,
    externalId: row.external_id,
    hostedUrl: row.hosted_url,
    createdAt: row.created_at,
    paidAt: row.paid_at,
    voidedAt: row.voided_at,
    buyer: { company: row.buyer_company, address: row.buyer_address, taxId: row.buyer_tax_id },
  };
}

// Crockford's base 32 without I, L, O and U: a reference read out or typed from a bank statement
// cannot mix up 1/I/L or 0/O.
const REFERENCE_ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

export function newInvoiceId(): string {
  return newId('inv');
}

/** `VH-7K3M-9Q2X`: what the customer quotes on a bank transfer (40 random bits). */
export function newInvoiceReference(): string {
  const code = randomChars(REFERENCE_ALPHABET, 8);
  return `VH-${code.slice(0, 4)}-${code.slice(4)}`;
}

export type NewInvoice = Pick<Invoice, 'accountId' | 'provider' | 'kind' | 'planCode' | 'billing' | 'amountCents' | 'currency' | 'description'> &
  Partial<Pick<Invoice, 'reference' | 'status' | 'subscriptionId' | 'externalId' | 'hostedUrl' | 'paidAt' | 'buyer'>>;

export interface InvoiceListFilter {
  email?: string;
  status?: InvoiceStatus;
  limit?: number;
  /** The last invoice of the previous page (newest first). */
  before?: { createdAt: string; id: string };
}

export class InvoicesRepository {
  constructor(private readonly db: Db) {}

  async create(input: NewInvoice, now = new Date()): Promise<Invoice> {
    const row: InvoiceRow = {
      id: newInvoiceId(),
      reference: input.reference ?? newInvoiceReference(),
      account_id: input.accountId,
      provider: input.provider,
      kind: input.kind,
      plan_code: input.planCode,
      billing: input.billing,
      amount_cents: input.amountCents,
      currency: input.currency,
      description: input.description,
      subscription_id: input.subscriptionId ?? null,
      status: input.status ?? 'open',
      external_id: input.externalId ?? null,
      hosted_url: input.hostedUrl ?? null,
      created_at: now.toISOString(),
      paid_at: input.paidAt ?? null,
      voided_at: null,
      buyer_company: input.buyer?.company ?? null,
      buyer_address: input.buyer?.address ?? null,
      buyer_tax_id: input.buyer?.taxId ?? null,
    };
    await this.db.kysely.insertInto('invoices').values(row).execute();
    return toInvoice(row);
  }

  async findById(id: string): Promise<Invoice | undefined> {
    const row = await this.db.kysely.selectFrom('invoices').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toInvoice(row);
  }

  /** By id (`inv_...`) or by the reference on the bank statement (`VH-...`, any case). */
  async findByIdOrReference(value: string): Promise<Invoice | undefined> {
    const key = value.trim();
    const row = await this.db.kysely
      .selectFrom('invoices')
      .selectAll()
      .where((eb) => eb.or([eb('id', '=', key), eb('reference', '=', key.toUpperCase())]))
      .executeTakeFirst();
    return row && toInvoice(row);
  }

  async findByExternalId(externalId: string): Promise<Invoice | undefined> {
    const row = await this.db.kysely.selectFrom('invoices').selectAll().where('external_id', '=', externalId).executeTakeFirst();
    return row && toInvoice(row);
  }

  /** One invoice of one account: an id alone never shows another customer's invoice. */
  async findForAccount(accountId: string, id: string): Promise<Invoice | undefined> {
    const row = await this.db.kysely
      .selectFrom('invoices')
      .selectAll()
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    return row && toInvoice(row);
  }

  async listForAccount(accountId: string, limit = 50): Promise<Invoice[]> {
    const rows = await this.db.kysely
      .selectFrom('invoices')
      .selectAll()
      .where('account_id', '=', accountId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
    return rows.map(toInvoice);
  }

  /** For the operator: newest first, with the customer's email. */
  async list(filter: InvoiceListFilter = {}): Promise<(Invoice & { email: string })[]> {
    let query = this.db.kysely
      .selectFrom('invoices as i')
      .innerJoin('accounts as a', 'a.id', 'i.account_id')
      .selectAll('i')
      // A deleted account's invoices still name the address it had.
      .select((eb) => eb.fn.coalesce('a.deleted_email', 'a.email').as('email'));
    if (filter.email !== undefined) {
      const email = normaliseEmail(filter.email);
      query = query.where((eb) => eb.or([eb('a.email', '=', email), eb('a.deleted_email', '=', email)]));
    }
    if (filter.status !== undefined) query = query.where('i.status', '=', filter.status);
    if (filter.before) {
      const { createdAt, id } = filter.before;
      query = query.where((eb) => eb.or([eb('i.created_at', '<', createdAt), eb.and([eb('i.created_at', '=', createdAt), eb('i.id', '<', id)])]));
    }
    const rows = await query.orderBy('i.created_at', 'desc').orderBy('i.id', 'desc').limit(filter.limit ?? 500).execute();
    return rows.map((row) => ({ ...toInvoice(row), email: row.email }));
  }

  /** Open invoices of a kind for a subscription (to avoid issuing a second renewal invoice). */
  async findOpen(accountId: string, kind: InvoiceKind, subscriptionId: string | null): Promise<Invoice | undefined> {
    let query = this.db.kysely
      .selectFrom('invoices')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('kind', '=', kind)
      .where('status', '=', 'open');
    query = subscriptionId === null ? query.where('subscription_id', 'is', null) : query.where('subscription_id', '=', subscriptionId);
    const row = await query.orderBy('created_at', 'desc').executeTakeFirst();
    return row && toInvoice(row);
  }

  /** open -> paid, once: false when it was not open (already paid, void, or paid by a racing call). */
  async markPaid(id: string, at: Date): Promise<boolean> {
    const result = await this.db.kysely
      .updateTable('invoices')
      .set({ status: 'paid', paid_at: at.toISOString() })
      .where('id', '=', id)
      .where('status', '=', 'open')
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** open -> void, once. */
  async markVoid(id: string, at: Date): Promise<boolean> {
    const result = await this.db.kysely
      .updateTable('invoices')
      .set({ status: 'void', voided_at: at.toISOString() })
      .where('id', '=', id)
      .where('status', '=', 'open')
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** Voids every open manual invoice of the account (its deletion): none can start a plan any more. */
  async voidOpenManual(accountId: string, at: Date): Promise<number> {
    const result = await this.db.kysely
      .updateTable('invoices')
      .set({ status: 'void', voided_at: at.toISOString() })
      .where('account_id', '=', accountId)
      .where('provider', '=', 'manual')
      .where('status', '=', 'open')
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }
}
