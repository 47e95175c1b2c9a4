import { marketKey } from './market-key.ts';
import type { Lot } from './lot.ts';

/**
 * A market group (issue 24; docs/decisions.md, "The catalogue and the market at scale"): the
 * comparables of one make key, model key, year and UTC month of sale. A market value reads the
 * groups of its three years and its window's months; the import bumps the generation of every
 * group a lot it writes leaves or enters (0026).
 */
export interface MarketGroup {
  makeKey: string;
  modelKey: string;
  year: number;
  /** 'YYYY-MM'. */
  month: string;
}

/** The fields that make a lot a comparable, and what a comparable is read for (storage/lot-rows.ts, COMPARABLE_COLUMNS). */
export const MARKET_FIELDS = ['brand', 'model', 'year', 'sale_date', 'price', 'retail_value', 'odometer', 'primary_damage'] as const;

export type MarketFields = Pick<Lot, (typeof MARKET_FIELDS)[number]>;

/**
 * The group whose comparable a lot with these values is, or null when it is no comparable: a sale
 * date, a price above 0, a year, and a make and model that have keys. Stored sale dates are ISO
 * date-times in UTC (ingest/normalise-lot.ts): the month is their first seven characters.
 */
export function comparableGroup(lot: MarketFields): MarketGroup | null {
  if (lot.price === null || lot.price <= 0 || lot.year === null || lot.sale_date === null) return null;
  const makeKey = marketKey(lot.brand);
  const modelKey = marketKey(lot.model);
  if (makeKey === null || modelKey === null) return null;
  return { makeKey, modelKey, year: lot.year, month: lot.sale_date.slice(0, 7) };
}

export const marketGroupKey = (group: MarketGroup): string => `${group.makeKey}\u0000${group.modelKey}\u0000${group.year}\u0000${group.month}`;

/** The months 'YYYY-MM' from the month of `from` to the month of `to` (ISO date-times in UTC), in order. */
export function monthsBetween(from: string, to: string): string[] {
  const months: string[] = [];
  let year = Number(from.slice(0, 4));
  let month = Number(from.slice(5, 7));
  const lastYear = Number(to.slice(0, 4));
  const lastMonth = Number(to.slice(5, 7));
  while (year < lastYear || (year === lastYear && month <= lastMonth)) {
    months.push(`${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}`);
    month++;
    if (month > 12) {
      month = 1;
      year++;
    }
  }
  return months;
}

/** The first instant of the month after 'YYYY-MM', as a stored sale date would write it. */
export function nextMonthStart(month: string): string {
  const year = Number(month.slice(0, 4));
  const index = Number(month.slice(5, 7));
  return new Date(Date.UTC(year, index, 1)).toISOString();
}

/** The first instant of 'YYYY-MM', as a stored sale date would write it. */
export function monthStart(month: string): string {
  return new Date(Date.UTC(Number(month.slice(0, 4)), Number(month.slice(5, 7)) - 1, 1)).toISOString();
}
