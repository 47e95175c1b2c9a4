/** A customer account. Timestamps are ISO 8601 UTC strings, as stored. */
export interface Account {
  id: string;
  email: string;
  createdAt: string;
}

/** Emails compare without case or surrounding blanks: one account per address. */
export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}
