import type { LotJson } from './lot.ts';

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

/** A page of the catalogue as the API answers it: its lots are the store's JSON text, spliced as they are. */
export interface CataloguePage {
  lots: LotJson[];
  next_cursor: string | null;
}

/**
 * The page's JSON, the route schema's fields in its order, with the lots spliced in unparsed: 25
 * lots made into objects and serialised by the schema held the catalogue to a fifth of the
 * search's throughput (docs/decisions.md, "A catalogue page as the store's JSON text"). A test
 * holds it to the route schema's own serialiser.
 */
export function cataloguePageJson(page: CataloguePage): string {
  return `{"lots":[${page.lots.join(',')}],"next_cursor":${page.next_cursor === null ? 'null' : JSON.stringify(page.next_cursor)}}`;
}
