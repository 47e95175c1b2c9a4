import type { Lot } from './lot.ts';

/**
 * What similar cars sold for (contract, "Market value"): the figures the API answers, the report
 * page shows and the website's Market page shows. Every price figure is a whole dollar (rounded
 * half up); a figure is null when there are no comparables.
 */
export interface MarketValue {
  vehicle: { make: string; model: string; year: number };
  /** ISO 8601 date-times, UTC, milliseconds: the sale dates the comparables fall in. */
  window: { from: string; to: string };
  comparables: {
    count: number;
    price: { min: number | null; p25: number | null; median: number | null; p75: number | null; max: number | null };
    share_of_retail_value: { median: number | null };
  };
  /** By count descending. */
  by_damage: { primary_damage: string; count: number; median_price: number }[];
  /** By month ascending (UTC, `YYYY-MM`), months without sales left out. */
  by_month: { month: string; count: number; median_price: number }[];
  /** Up to 10: same year first, then nearest odometer to the vehicle's latest known one, then newest sale. */
  closest: Lot[];
}

/** The vehicle a market value is asked for: by VIN (its stored lots, else its decoded VIN), or by make, model and year. */
export type MarketSubject = { kind: 'vin'; vin: string } | { kind: 'vehicle'; make: string; model: string; year: number };

/** The optional narrowing of a market value. `months` is 1-36 (default 12); the window ends at `asOf`. */
export interface MarketOptions {
  primaryDamage: string | null;
  months: number;
  /** The window's end: now for the API, the report's time for a report page. */
  asOf: Date;
}
