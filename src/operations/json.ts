import type { ApiToken } from '../domain/api-token.ts';
import type { Invoice } from '../domain/invoice.ts';
import type { AuditEntry } from '../domain/operations.ts';
import type { AccountDetails, AccountSummary } from './operator-service.ts';

/**
 * The operators' records as JSON, one shape for the CLI's --json and the admin API (whose
 * TypeBox schemas in src/http/admin/schemas.ts describe these same fields).
 */
export function accountJson(account: AccountSummary) {
  return {
    id: account.id,
    email: account.email,
    status: account.status,
    created_at: account.createdAt,
    deleted_at: account.deletedAt,
    plan: account.subscription?.planCode ?? null,
    billing: account.subscription?.billing ?? null,
    subscription_id: account.subscription?.id ?? null,
    started_at: account.subscription?.startedAt ?? null,
    ends_at: account.subscription?.endsAt ?? null,
    usage: account.usage ? { used: account.usage.used, quota: account.usage.quota, period_start: account.usage.periodStart.toISOString(), resets_at: account.usage.resetsAt.toISOString() } : null,
  };
}

/** A token as listed: the hint (its first characters), never the secret or its hash. */
export function tokenJson(token: ApiToken) {
  return {
    id: token.id,
    account_id: token.accountId,
    name: token.name,
    kind: token.kind,
    hint: token.displayPrefix,
    created_at: token.createdAt,
    last_used_at: token.lastUsedAt,
    revoked_at: token.revokedAt,
    expires_at: token.expiresAt,
  };
}

export function invoiceJson(invoice: Invoice & { email?: string }) {
  return {
    id: invoice.id,
    reference: invoice.reference,
    account_id: invoice.accountId,
    ...(invoice.email !== undefined ? { email: invoice.email } : {}),
    provider: invoice.provider,
    kind: invoice.kind,
    plan: invoice.planCode,
    billing: invoice.billing,
    amount_cents: invoice.amountCents,
    currency: invoice.currency,
    status: invoice.status,
    created_at: invoice.createdAt,
    paid_at: invoice.paidAt,
    voided_at: invoice.voidedAt,
  };
}

export function accountDetailsJson(account: AccountDetails) {
  return {
    ...accountJson(account),
    provider: account.provider,
    paid_through: account.paidThrough,
    cancel_at_period_end: account.cancelAtPeriodEnd,
    tokens: account.tokens.map(tokenJson),
    invoices: account.invoices.map((invoice) => invoiceJson(invoice)),
  };
}

export function auditJson(entry: AuditEntry) {
  return { id: entry.id, at: entry.at, actor: entry.actor, action: entry.action, target: entry.target, details: entry.details };
}
