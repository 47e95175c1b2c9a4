import type { Account } from './account.ts';
import type { Subscription } from './subscription.ts';

/**
 * What an operator did, as the audit log names it. A closed set, so a listing can be filtered and
 * read without guessing at free text.
 */
export const AUDIT_ACTIONS = [
  'account.create',
  'subscription.change',
  'subscription.extend',
  'subscription.end',
  'token.create',
  'token.revoke',
  'invoice.pay',
  'invoice.void',
  'invoice.payee',
  'lots.import',
  'plan.create',
  'operator_token.create',
  'operator_token.revoke',
  'signing_key.rotate',
  'feed.add',
  'feed.run',
  'feed.pause',
  'feed.resume',
  'feed.remove',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** One entry of the operators' audit log. */
export interface AuditEntry {
  id: string;
  at: string;
  /** The operator token's name (`token:<name>`) or `cli:<os user>`. */
  actor: string;
  action: AuditAction;
  /** The id of what was changed (acct_..., inv_..., tok_...), or a description for an import. */
  target: string;
  /** What changed, as recorded; never a secret. */
  details: Record<string, unknown>;
}

export type NewAuditEntry = Omit<AuditEntry, 'id' | 'at'>;

/**
 * Where an account stands, for the operator's listing: a subscription in force now (`active`), one
 * that has ended (`lapsed`), none ever (`none`), or the customer deleted the account (`deleted`).
 */
export const ACCOUNT_STATUSES = ['active', 'lapsed', 'none', 'deleted'] as const;
export type AccountStatus = (typeof ACCOUNT_STATUSES)[number];

/** An account as the operators' listing reads it from storage. */
export interface AccountListing {
  account: Account;
  /** The address the account had, for a deleted one (its `email` is then a placeholder). */
  deletedEmail: string | null;
  deletedAt: string | null;
  /** The subscription in force at the time of the listing, if any. */
  inForce: Subscription | null;
  /** Whether the account ever had a subscription. */
  everSubscribed: boolean;
}

/** Filters of the operators' account listing; `before` is the last row of the previous page. */
export interface AccountListFilter {
  /** A part of the email address (case is ignored). */
  email?: string;
  /** Accounts whose subscription in force is on this plan. */
  plan?: string;
  status?: AccountStatus;
  limit: number;
  before?: { createdAt: string; id: string };
}
