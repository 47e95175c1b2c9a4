import type { CataloguePage } from '../domain/catalogue.ts';
import { lotJson, type Lot } from '../domain/lot.ts';
import type { MarketValue } from '../domain/market.ts';
import type { SearchPrincipal } from '../domain/principal.ts';
import type { CountedOutcome, SearchService } from '../search/search-service.ts';
import type { Repositories } from '../storage/repositories/index.ts';
import { encodeCatalogueCursor, parseCatalogueQuery, parseMarketQuery, type CatalogueQuery, type Refusal } from './market-query.ts';
import type { MarketService } from './market-service.ts';

/** A call's answer, or its refusal before anything was rated or counted (a bad or unknown parameter). */
export type MarketCallOutcome<T> = CountedOutcome<T> | { kind: 'invalid_parameter'; field: string; messages: string[] };

export interface MarketCallsOptions {
  repos: Repositories;
  search: SearchService;
  market: MarketService;
  /** The photo archive's step (search-service.ts's): archived photos listed by their copies. */
  resolveImages?: (lots: Lot[]) => Promise<Lot[]>;
  now?: () => Date;
}

/**
 * The catalogue search and the market value as counted calls (contract, "Additions to v1, second
 * round"): each query is checked first (a refusal counts nothing), then the call runs through
 * SearchService.runCounted, which rates it, counts it, records it by kind and applies the
 * Idempotency-Key to its canonical query.
 */
export class MarketCalls {
  private readonly now: () => Date;

  constructor(private readonly options: MarketCallsOptions) {
    this.now = options.now ?? (() => new Date());
  }

  /** GET /api/v1/lots: one page of lots, and the cursor of the next one (null on the last). */
  catalogue(principal: SearchPrincipal, params: URLSearchParams, rawIdempotencyKey: string | undefined): Promise<MarketCallOutcome<CataloguePage>> {
    const query = parseCatalogueQuery(params);
    if ('ok' in query) return Promise.resolve(invalid(query));
    return this.options.search.runCounted(principal, { kind: 'catalogue', query: query.canonical }, rawIdempotencyKey, async () => ({
      kind: 'found',
      body: await this.page(query),
    }));
  }

  /** GET /api/v1/market: what similar cars sold for; a VIN that tells no vehicle is a counted not-found. */
  market(principal: SearchPrincipal, params: URLSearchParams, rawIdempotencyKey: string | undefined): Promise<MarketCallOutcome<MarketValue>> {
    const query = parseMarketQuery(params);
    if ('ok' in query) return Promise.resolve(invalid(query));
    return this.options.search.runCounted(principal, { kind: 'market', query: query.canonical }, rawIdempotencyKey, async () => {
      const value = await this.options.market.valueFor(query.subject, { primaryDamage: query.primaryDamage, months: query.months, asOf: this.now() });
      if (value !== null) return { kind: 'found', body: value };
      const vin = query.subject.kind === 'vin' ? query.subject.vin : '';
      return { kind: 'not_found', message: `No make, model and year are known for VIN ${vin}: no lot of it is stored and it does not decode.` };
    });
  }

  /** One more lot than the page holds says whether there is a next page. */
  private async page(query: CatalogueQuery): Promise<CataloguePage> {
    const rows = await this.options.repos.market.cataloguePage(query.filter, query.sort, this.now().toISOString(), query.after, query.limit + 1);
    const shown = rows.slice(0, query.limit);
    const last = shown[shown.length - 1];
    const lots = shown.map((row) => row.lot);
    const { resolveImages } = this.options;
    return {
      // With the photo archive on, archived photos are listed by their copies: only then are the lots parsed (as a search's are).
      lots: resolveImages && lots.length > 0 ? (await resolveImages(lots.map((text) => JSON.parse(text) as Lot))).map(lotJson) : lots,
      next_cursor: rows.length > query.limit && last !== undefined ? encodeCatalogueCursor(query.sort, last.position) : null,
    };
  }
}

function invalid(refusal: Refusal): MarketCallOutcome<never> {
  return { kind: 'invalid_parameter', field: refusal.field, messages: refusal.messages };
}
