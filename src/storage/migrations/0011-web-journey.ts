import type { Kysely } from 'kysely';

/**
 * The customer's web journey (issue 12): the buyer's details an invoice carries (company, postal
 * address, tax id), kept on the account to fill the next checkout and copied onto each invoice at
 * issue, so that a later edit never rewrites an issued invoice; when the terms were accepted at
 * sign-up; and a deleted account's marker. A deleted account keeps its row (invoices, searches and
 * usage refer to it: the operator's ledger) with the address it had, moved to `deleted_email` so
 * that the address is free for a new account. Same conventions as 0001.
 */
export async function up(db: Kysely<any>): Promise<void> {
  for (const column of ['company', 'billing_address', 'tax_id', 'terms_accepted_at', 'deleted_at', 'deleted_email']) {
    await db.schema.alterTable('accounts').addColumn(column, 'text').execute();
  }
  for (const column of ['buyer_company', 'buyer_address', 'buyer_tax_id']) {
    await db.schema.alterTable('invoices').addColumn(column, 'text').execute();
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const column of ['buyer_company', 'buyer_address', 'buyer_tax_id']) {
    await db.schema.alterTable('invoices').dropColumn(column).execute();
  }
  for (const column of ['company', 'billing_address', 'tax_id', 'terms_accepted_at', 'deleted_at', 'deleted_email']) {
    await db.schema.alterTable('accounts').dropColumn(column).execute();
  }
}
