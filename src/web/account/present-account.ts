import type { ApiToken } from '../../domain/api-token.ts';
import type { BillingOverview } from '../../billing/billing-service.ts';
import { formatCents } from '../../billing/pricing.ts';
import type { Usage } from '../../limits/usage-service.ts';
import { formatDate, formatDateTime, formatInteger } from '../format.ts';

const day = (date: Date | string) => formatDate(typeof date === 'string' ? date : date.toISOString()) ?? '';

export interface PlanSummary {
  name: string;
  billing: string;
  price: string | null;
  per: 'month' | 'year';
  /** One line on where the plan stands: renews, ends, paid through. */
  status: string;
  tone: 'ok' | 'warn' | 'none';
}

/** The plan as the overview and billing pages state it. */
export function planSummary(billing: BillingOverview): PlanSummary | null {
  const { subscription, plan } = billing;
  if (!subscription || !plan) return null;
  const price = billing.provider === 'operator' ? null : formatCents(subscription.billing === 'annual' ? plan.annualPriceCents : plan.monthlyPriceCents, true);
  let status: string;
  let tone: PlanSummary['tone'] = 'ok';
  if (billing.cancelAtPeriodEnd && billing.endsAt) {
    status = `Cancelled: ends on ${day(billing.endsAt)}`;
    tone = 'warn';
  } else if (billing.provider === 'stripe' && billing.paidThrough) {
    status = `Renews automatically on ${day(billing.paidThrough)}`;
  } else if (billing.provider === 'manual' && billing.paidThrough) {
    status = `Paid through ${day(billing.paidThrough)}`;
    if (billing.paidThrough.getTime() - Date.now() < 14 * 24 * 60 * 60 * 1000) tone = 'warn';
  } else if (billing.endsAt) {
    status = `Ends on ${day(billing.endsAt)}`;
    tone = 'warn';
  } else {
    status = 'Active until cancelled (arranged with our team)';
  }
  return {
    name: plan.name,
    billing: subscription.billing === 'annual' ? 'Annual billing' : 'Monthly billing',
    price,
    per: subscription.billing === 'annual' ? 'year' : 'month',
    status,
    tone,
  };
}

export interface UsageSummary {
  used: string;
  quota: string;
  remaining: string;
  percent: number;
  rate: string;
  periodStart: string;
  resetsAt: string;
  resetsAtIso: string;
  planName: string;
}

export function usageSummary(usage: Usage): UsageSummary {
  return {
    used: formatInteger(usage.used) ?? '0',
    quota: formatInteger(usage.quota) ?? '0',
    remaining: formatInteger(usage.remaining) ?? '0',
    percent: usage.quota > 0 ? Math.min(100, Math.round((usage.used / usage.quota) * 1000) / 10) : 0,
    rate: formatInteger(usage.ratePerSecond) ?? '',
    periodStart: day(usage.periodStart),
    resetsAt: formatDateTime(usage.resetsAt.toISOString()),
    resetsAtIso: usage.resetsAt.toISOString(),
    planName: usage.plan.name,
  };
}

export interface TokenView {
  id: string;
  name: string;
  prefix: string;
  /** A sandbox token (`vh_test_...`). */
  test: boolean;
  created: string;
  lastUsed: string | null;
  state: 'active' | 'expiring' | 'expired' | 'revoked';
  stateText: string;
}

export function tokenView(token: ApiToken, now: Date): TokenView {
  const at = now.toISOString();
  let state: TokenView['state'] = 'active';
  let stateText = 'Active';
  if (token.revokedAt !== null) {
    state = 'revoked';
    stateText = `Revoked ${day(token.revokedAt)}`;
  } else if (token.expiresAt !== null && token.expiresAt <= at) {
    state = 'expired';
    stateText = `Expired ${day(token.expiresAt)}`;
  } else if (token.expiresAt !== null) {
    state = 'expiring';
    stateText = `Rotated: works until ${formatDateTime(token.expiresAt)}`;
  }
  return {
    id: token.id,
    name: token.name,
    prefix: `${token.displayPrefix}…`,
    test: token.kind === 'test',
    created: day(token.createdAt),
    lastUsed: token.lastUsedAt ? formatDateTime(token.lastUsedAt) : null,
    state,
    stateText,
  };
}
