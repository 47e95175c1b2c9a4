import type { Plan } from '../../domain/plan.ts';
import type { BillingCycle } from '../../domain/principal.ts';
import { annualDiscountPercent, formatCents } from '../../billing/pricing.ts';
import type { FieldErrors } from '../../accounts/validation.ts';
import { formatDate, formatDateTime, formatInteger } from '../format.ts';

/** Helpers every page template gets: links under the base path, and the site's number formats. */
export function pageHelpers(basePath: string) {
  return {
    href: (path: string) => `${basePath}${path}`,
    money: (cents: number) => formatCents(cents, true),
    exactMoney: (cents: number) => formatCents(cents),
    integer: (value: number) => formatInteger(value) ?? '',
    date: (iso: string | Date | null) => (iso === null ? '' : (formatDate(typeof iso === 'string' ? iso : iso.toISOString()) ?? '')),
    dateTime: (iso: string | Date) => formatDateTime(typeof iso === 'string' ? iso : iso.toISOString()),
    isoTime: (iso: string | Date) => (typeof iso === 'string' ? iso : iso.toISOString()),
  };
}

export interface PlanCard {
  code: string;
  name: string;
  favourite: boolean;
  quota: string;
  rate: string;
  monthly: string;
  annual: string;
  /** The annual price per month, e.g. "$120". */
  annualPerMonth: string;
  discountPercent: number;
  /** The price of the billing period the page shows. */
  price: string;
  per: string;
  note: string;
  /** What one search costs when the whole quota is used, at this billing period's price, e.g. "$0.05". */
  perSearch: string;
}

/** A price per search to a tenth of a cent at most ($0.048), and no trailing zeros beyond cents. */
function perSearchPrice(cents: number): string {
  const dollars = cents / 100;
  const digits = dollars >= 0.1 ? 2 : 3;
  return `$${dollars.toFixed(digits).replace(/(\.\d\d)0$/, '$1')}`;
}

export function planCard(plan: Plan, billing: BillingCycle): PlanCard {
  const discountPercent = annualDiscountPercent(plan);
  const monthly = formatCents(plan.monthlyPriceCents, true);
  const annual = formatCents(plan.annualPriceCents, true);
  const annualPerMonth = formatCents(Math.round(plan.annualPriceCents / 12), true);
  return {
    code: plan.code,
    name: plan.name,
    favourite: plan.isFavourite,
    quota: formatInteger(plan.monthlyQuota) ?? '',
    rate: formatInteger(plan.ratePerSecond) ?? '',
    monthly,
    annual,
    annualPerMonth,
    discountPercent,
    price: billing === 'annual' ? annual : monthly,
    per: billing === 'annual' ? 'year' : 'month',
    perSearch: perSearchPrice(
      plan.monthlyQuota > 0 ? (billing === 'annual' ? plan.annualPriceCents / 12 : plan.monthlyPriceCents) / plan.monthlyQuota : 0,
    ),
    note:
      billing === 'annual'
        ? discountPercent > 0
          ? `${annualPerMonth} a month, billed yearly: ${discountPercent}% less than monthly`
          : `Billed yearly (${monthly} × 12)`
        : discountPercent > 0
          ? `Or ${annual} a year: save ${discountPercent}%`
          : `Or ${annual} a year`,
  };
}

export function parseBilling(value: unknown): BillingCycle | null {
  return value === 'monthly' || value === 'annual' ? value : null;
}

const ACCOUNT_PATH = /^\/account(?:[/?#]|$)/;
/** Any origin stands in for the site's own: only the path, query and fragment are kept. */
const SITE = 'http://site.invalid';

/**
 * A path to go to after logging in: only a local path of the site (`/account...`), so that the
 * parameter cannot send anyone to another site (an open redirect). It goes out in a Location
 * header, which carries only Latin-1 (Node throws on anything else), so it is returned as a URL
 * serialises it: percent-encoded, with dot segments resolved as a browser would resolve them (and
 * checked again, so that `/account/../pricing` is refused).
 */
export function safeNext(value: unknown): string | null {
  if (typeof value !== 'string' || value.length > 500) return null;
  if (!ACCOUNT_PATH.test(value)) return null;
  if (/[\\\s]/.test(value) || value.startsWith('//')) return null;
  const url = new URL(value, SITE);
  if (url.origin !== SITE) return null;
  const path = `${url.pathname}${url.search}${url.hash}`;
  return ACCOUNT_PATH.test(path) ? path : null;
}

/** `path` with one query parameter added (or replaced); path is a local path such as safeNext returns. */
export function withQuery(path: string, name: string, value: string): string {
  const url = new URL(path, SITE);
  url.searchParams.set(name, value);
  return `${url.pathname}${url.search}${url.hash}`;
}

export interface ChosenPlan {
  name: string;
  price: string;
  per: string;
  quota: string;
}

/** The plan named by a `next` of `/account/billing?plan=...&billing=...`, for the sign-up and log-in pages. */
export function chosenPlanOf(next: string | null, plans: Plan[]): ChosenPlan | null {
  if (!next) return null;
  const url = new URL(next, SITE);
  if (url.pathname !== '/account/billing') return null;
  const plan = plans.find((candidate) => candidate.code === url.searchParams.get('plan'));
  if (!plan) return null;
  const card = planCard(plan, parseBilling(url.searchParams.get('billing')) ?? 'monthly');
  return { name: card.name, price: card.price, per: card.per, quota: card.quota };
}

/** The first message of a field, for the template. */
export function firstErrors(errors: FieldErrors): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [field, messages] of Object.entries(errors)) if (messages[0]) out[field] = messages[0];
  return out;
}

/** Human wording of a wait, for throttling pages. */
export function formatWait(ms: number): string {
  const minutes = Math.ceil(ms / 60_000);
  if (minutes <= 1) return 'a minute';
  return `${minutes} minutes`;
}
