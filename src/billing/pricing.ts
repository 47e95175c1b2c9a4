import type { PlanRow, SubscriptionRow } from '../storage/schema.ts';
import { addMonthsClamped } from '../limits/billing-period.ts';

export type Billing = SubscriptionRow['billing'];

/** How many monthly billing periods one paid term covers. */
export const TERM_MONTHS: Record<Billing, number> = { monthly: 1, annual: 12 };

export function termPriceCents(plan: PlanRow, billing: Billing): number {
  return billing === 'annual' ? plan.annual_price_cents : plan.monthly_price_cents;
}

/** The annual discount against 12 monthly payments, in whole percent (0 when there is none). */
export function annualDiscountPercent(plan: PlanRow): number {
  const full = plan.monthly_price_cents * 12;
  if (full === 0 || plan.annual_price_cents >= full) return 0;
  return Math.round(((full - plan.annual_price_cents) / full) * 100);
}

/** Plans compare by monthly price, then quota: "up" means more of both for the customer. */
export function comparePlans(a: PlanRow, b: PlanRow): number {
  return a.monthly_price_cents - b.monthly_price_cents || a.monthly_quota - b.monthly_quota || a.rate_per_second - b.rate_per_second;
}

/**
 * Which monthly boundary of the anchor `at` is: k such that addMonthsClamped(anchor, k) is the
 * last boundary at or before `at` (the same arithmetic as billingPeriodAt).
 */
export function boundaryIndex(anchor: Date, at: Date): number {
  let k = (at.getUTCFullYear() - anchor.getUTCFullYear()) * 12 + (at.getUTCMonth() - anchor.getUTCMonth());
  if (addMonthsClamped(anchor, k).getTime() > at.getTime()) k -= 1;
  return k;
}

/** The paid term that ends at `paidThrough`: it began one term (1 or 12 periods) earlier. */
export function paidTerm(anchor: Date, paidThrough: Date, billing: Billing): { start: Date; end: Date } {
  const k = boundaryIndex(anchor, paidThrough);
  return { start: addMonthsClamped(anchor, Math.max(0, k - TERM_MONTHS[billing])), end: paidThrough };
}

/** The end of the term after the one ending at `paidThrough`, on the anchor's grid. */
export function nextTermEnd(anchor: Date, paidThrough: Date, billing: Billing): Date {
  return addMonthsClamped(anchor, boundaryIndex(anchor, paidThrough) + TERM_MONTHS[billing]);
}

/** The end of the first term of a subscription that starts at `start`. */
export function firstTermEnd(start: Date, billing: Billing): Date {
  return addMonthsClamped(start, TERM_MONTHS[billing]);
}

/**
 * What an upgrade costs for the rest of the paid term: the difference of the two term prices,
 * in proportion to the time left, rounded to the cent.
 */
export function prorationCents(from: PlanRow, to: PlanRow, billing: Billing, term: { start: Date; end: Date }, now: Date): number {
  const length = term.end.getTime() - term.start.getTime();
  const left = Math.min(length, Math.max(0, term.end.getTime() - now.getTime()));
  if (length <= 0) return 0;
  const difference = termPriceCents(to, billing) - termPriceCents(from, billing);
  return Math.max(0, Math.round((difference * left) / length));
}

const usd = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD' });
const usdWhole = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', maximumFractionDigits: 0 });

/** `$1,440.00`, or `$1,440` with `whole` when the cents are zero (price lists). */
export function formatCents(cents: number, whole = false): string {
  return whole && cents % 100 === 0 ? usdWhole.format(cents / 100) : usd.format(cents / 100);
}
