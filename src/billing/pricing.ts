import type { Plan } from '../domain/plan.ts';
import type { BillingCycle } from '../domain/principal.ts';
import { addMonthsClamped } from '../limits/billing-period.ts';

/** How many monthly billing periods one paid term covers. */
export const TERM_MONTHS: Record<BillingCycle, number> = { monthly: 1, annual: 12 };

export function termPriceCents(plan: Plan, billing: BillingCycle): number {
  return billing === 'annual' ? plan.annualPriceCents : plan.monthlyPriceCents;
}

/** The annual discount against 12 monthly payments, in whole percent (0 when there is none). */
export function annualDiscountPercent(plan: Plan): number {
  const full = plan.monthlyPriceCents * 12;
  if (full === 0 || plan.annualPriceCents >= full) return 0;
  return Math.round(((full - plan.annualPriceCents) / full) * 100);
}

/** Plans compare by monthly price, then quota: "up" means more of both for the customer. */
export function comparePlans(a: Plan, b: Plan): number {
  return a.monthlyPriceCents - b.monthlyPriceCents || a.monthlyQuota - b.monthlyQuota || a.ratePerSecond - b.ratePerSecond;
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
export function paidTerm(anchor: Date, paidThrough: Date, billing: BillingCycle): { start: Date; end: Date } {
  const k = boundaryIndex(anchor, paidThrough);
  return { start: addMonthsClamped(anchor, Math.max(0, k - TERM_MONTHS[billing])), end: paidThrough };
}

/** The end of the term after the one ending at `paidThrough`, on the anchor's grid. */
export function nextTermEnd(anchor: Date, paidThrough: Date, billing: BillingCycle): Date {
  return addMonthsClamped(anchor, boundaryIndex(anchor, paidThrough) + TERM_MONTHS[billing]);
}

/** The end of the first term of a subscription that starts at `start`. */
export function firstTermEnd(start: Date, billing: BillingCycle): Date {
  return addMonthsClamped(start, TERM_MONTHS[billing]);
}

/**
 * What an upgrade costs for the rest of the paid term: the difference of the two term prices,
 * in proportion to the time left, rounded to the cent.
 */
export function prorationCents(from: Plan, to: Plan, billing: BillingCycle, term: { start: Date; end: Date }, now: Date): number {
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
