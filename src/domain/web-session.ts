/** A logged-in browser of the personal account, with its account's email. Timestamps are ISO 8601 UTC strings. */
export interface LiveSession {
  idHash: string;
  accountId: string;
  email: string;
  createdAt: string;
  lastSeenAt: string;
  expiresAt: string;
}
