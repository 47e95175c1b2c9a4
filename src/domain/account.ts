import type { ReportLanguage } from './report-language.ts';

/** A customer account. Timestamps are ISO 8601 UTC strings, as stored. */
export interface Account {
  id: string;
  email: string;
  createdAt: string;
  /** The language the account's reports open in when the link names none; null: the reader's browser decides. */
  defaultLanguage: ReportLanguage | null;
}

/** Emails compare without case or surrounding blanks: one account per address. */
export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

/**
 * Who an invoice is addressed to, besides the account's email: asked at checkout, kept on the
 * account for the next one, and copied onto each invoice when it is issued.
 */
export interface BuyerDetails {
  company: string | null;
  address: string | null;
  taxId: string | null;
}

export const NO_BUYER_DETAILS: BuyerDetails = Object.freeze({ company: null, address: null, taxId: null });

/** Bounds of the buyer's fields (the address may take several lines). */
export const BUYER_LIMITS = { company: 200, address: 500, taxId: 50 } as const;
