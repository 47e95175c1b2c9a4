import type { Insertable } from 'kysely';
import type { Db } from '../database.ts';
import type { InvoiceRow, InvoicesTable } from '../schema.ts';
import { newId, randomChars } from '../../domain/ids.ts';

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

export type NewInvoice = Omit<Insertable<InvoicesTable>, 'id' | 'reference' | 'created_at' | 'status' | 'paid_at' | 'voided_at'> & {
  reference?: string;
  status?: InvoiceRow['status'];
  paid_at?: string | null;
};

export interface InvoiceListFilter {
  email?: string;
  status?: InvoiceRow['status'];
  limit?: number;
}

export class InvoicesRepository {
  constructor(private readonly db: Db) {}

  async create(input: NewInvoice, now = new Date()): Promise<InvoiceRow> {
    const row: InvoiceRow = {
      id: newInvoiceId(),
      reference: input.reference ?? newInvoiceReference(),
      account_id: input.account_id,
      provider: input.provider,
      kind: input.kind,
      plan_code: input.plan_code,
      billing: input.billing,
      amount_cents: input.amount_cents,
      currency: input.currency,
      description: input.description,
      subscription_id: input.subscription_id ?? null,
      status: input.status ?? 'open',
      external_id: input.external_id ?? null,
      hosted_url: input.hosted_url ?? null,
      created_at: now.toISOString(),
      paid_at: input.paid_at ?? null,
      voided_at: null,
    };
    await this.db.kysely.insertInto('invoices').values(row).execute();
    return row;
  }

  async findById(id: string): Promise<InvoiceRow | undefined> {
    return this.db.kysely.selectFrom('invoices').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** By id (`inv_...`) or by the reference on the bank statement (`VH-...`, any case). */
  async findByIdOrReference(value: string): Promise<InvoiceRow | undefined> {
    const key = value.trim();
    return this.db.kysely
      .selectFrom('invoices')
      .selectAll()
      .where((eb) => eb.or([eb('id', '=', key), eb('reference', '=', key.toUpperCase())]))
      .executeTakeFirst();
  }

  async findByExternalId(externalId: string): Promise<InvoiceRow | undefined> {
    return this.db.kysely.selectFrom('invoices').selectAll().where('external_id', '=', externalId).executeTakeFirst();
  }

  /** One invoice of one account: an id alone never shows another customer's invoice. */
  async findForAccount(accountId: string, id: string): Promise<InvoiceRow | undefined> {
    return this.db.kysely
      .selectFrom('invoices')
      .selectAll()
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
  }

  async listForAccount(accountId: string, limit = 50): Promise<InvoiceRow[]> {
    return this.db.kysely
      .selectFrom('invoices')
      .selectAll()
      .where('account_id', '=', accountId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
  }

  /** For the operator: newest first, with the customer's email. */
  async list(filter: InvoiceListFilter = {}): Promise<(InvoiceRow & { email: string })[]> {
    let query = this.db.kysely
      .selectFrom('invoices as i')
      .innerJoin('accounts as a', 'a.id', 'i.account_id')
      .selectAll('i')
      .select('a.email');
    if (filter.email !== undefined) query = query.where('a.email', '=', filter.email.trim().toLowerCase());
    if (filter.status !== undefined) query = query.where('i.status', '=', filter.status);
    return query.orderBy('i.created_at', 'desc').orderBy('i.id', 'desc').limit(filter.limit ?? 500).execute();
  }

  /** Open invoices of a kind for a subscription (to avoid issuing a second renewal invoice). */
  async findOpen(accountId: string, kind: InvoiceRow['kind'], subscriptionId: string | null): Promise<InvoiceRow | undefined> {
    let query = this.db.kysely
      .selectFrom('invoices')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('kind', '=', kind)
      .where('status', '=', 'open');
    query = subscriptionId === null ? query.where('subscription_id', 'is', null) : query.where('subscription_id', '=', subscriptionId);
    return query.orderBy('created_at', 'desc').executeTakeFirst();
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
}
