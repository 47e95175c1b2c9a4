/** The orders of the catalogue (contract, "Catalogue search"); ties by auction ascending, then lot id descending. */
export const CATALOGUE_SORTS = ['sale_date_desc', 'sale_date_asc', 'price_asc', 'price_desc'] as const;
export type CatalogueSort = (typeof CATALOGUE_SORTS)[number];

/**
 * A catalogue search's filters once checked and normalised, all combined with AND; null is "any".
 * Make, model and damage are their keys (domain/market-key.ts); dates are ISO date-times in UTC
 * with milliseconds, inclusive.
 */
export interface CatalogueFilter {
  makeKey: string | null;
  modelKey: string | null;
  damageKey: string | null;
  /** Lower-cased: compared with the stored document lower-cased. */
  document: string | null;
  auction: string | null;
  yearMin: number | null;
  yearMax: number | null;
  odometerMax: number | null;
  priceMin: number | null;
  priceMax: number | null;
  saleFrom: string | null;
  saleTo: string | null;
  /** `upcoming`: no sale date or one after `now`; `sold`: one at or before it. */
  status: 'upcoming' | 'sold' | null;
  locationZip: string | null;
  /** A whole VIN, or the known leading characters of a masked one. */
  vin: { kind: 'whole'; vin: string } | { kind: 'masked'; prefix: string } | null;
}

/**
 * Where a page ends in its order: the last lot's sort value (the sale date as the catalogue sorts
 * it, or the price as it sorts it: a missing one as the order puts it), auction and lot id.
 */
export interface CataloguePosition {
  value: string | number;
  auction: string;
  lotId: number;
}
