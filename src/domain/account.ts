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
