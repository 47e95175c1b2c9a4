import { Type } from '@sinclair/typebox';
import { CATALOGUE_SORTS, cataloguePageJson } from '../../domain/catalogue.ts';
import type { Lot } from '../../domain/lot.ts';
import type { SearchPrincipal } from '../../domain/principal.ts';
import { countedOrRefused, marketSandboxError } from '../../http/api/v1/market-answer.ts';
import { DEFAULT_LIMIT, MAX_CURSOR_CHARS, MAX_LIMIT, MAX_NAME_CHARS } from '../../market/market-query.ts';
import { countedBody, countedCost, queryOf } from '../counted-answer.ts';
import { IdempotencyKeyArgument, LotOutput } from '../schemas.ts';
import { count, defineTool } from '../tool.ts';

const text = (description: string, maxLength = MAX_NAME_CHARS) => Type.Optional(Type.String({ description, maxLength }));
const whole = (description: string) => Type.Optional(Type.Integer({ minimum: 0, description }));

/** GET /api/v1/lots as a tool: one page of the catalogue, counted as that call. */
export const searchLots = defineTool({
  name: 'search_lots',
  title: 'Search the catalogue of auction lots',
  description:
    'Find auction lots by what they are rather than by VIN: make, model, damage, title document, auction, model years, odometer, price, sale dates, status (upcoming or sold), location zip, ' +
    'or a masked VIN as auctions show it (the first 11 characters known, the rest *, e.g. 5N1DL0MM5KC******). All given filters combine with AND. ' +
    `Answers one page of lots (up to ${MAX_LIMIT}, ${DEFAULT_LIMIT} by default), each as in a report, and next_cursor for the next page (pass it back with the same filters). ` +
    'Counted as one call against the monthly quota per page, an empty page too; needs a live token (vh_live_).',
  access: 'search',
  sandboxRefusal: marketSandboxError,
  input: Type.Object(
    {
      make: text('Make, e.g. HONDA (case, spaces and punctuation ignored).'),
      model: text('Model, e.g. ACCORD or F-150 (compared the same way).'),
      primary_damage: text('Primary damage, e.g. FRONT END.'),
      document: text('Title or document type, the whole value, e.g. SALVAGE CERTIFICATE.'),
      auction: text('Auction: copart, iaai, ...', 40),
      year_min: whole('Model year from.'),
      year_max: whole('Model year to.'),
      odometer_max: whole('Odometer at most.'),
      price_min: whole('Price from, whole dollars.'),
      price_max: whole('Price to, whole dollars.'),
      sale_from: text('Sale date from (inclusive): an ISO date or date-time, e.g. 2026-01-01.', 40),
      sale_to: text('Sale date to (inclusive): an ISO date (the whole UTC day) or date-time.', 40),
      status: Type.Optional(Type.Union([Type.Literal('upcoming'), Type.Literal('sold')], { description: 'upcoming: no sale date or a future one; sold: a sale date in the past.' })),
      location_zip: text('Postal code of the lot location, the whole value.', 20),
      vin: text('A whole VIN, or a masked one (the first 11 characters known, the rest *).', 17),
      sort: Type.Optional(Type.Union(CATALOGUE_SORTS.map((sort) => Type.Literal(sort)), { description: 'Order: sale_date_desc (default; upcoming first), sale_date_asc, price_asc or price_desc.' })),
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_LIMIT, description: `Lots per page, 1-${MAX_LIMIT} (default ${DEFAULT_LIMIT}).` })),
      cursor: text('The next_cursor of the previous page, with the same other arguments.', MAX_CURSOR_CHARS),
      idempotency_key: IdempotencyKeyArgument,
    },
    { additionalProperties: false },
  ),
  output: Type.Object(
    {
      lots: Type.Array(LotOutput, { maxItems: MAX_LIMIT }),
      next_cursor: Type.Union([Type.String(), Type.Null()], { description: 'The cursor of the next page; null on the last page.' }),
    },
    { title: 'CataloguePage', additionalProperties: false },
  ),
  // Not read-only: each call spends quota.
  annotations: { title: 'Search the catalogue of auction lots', readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  async call({ services, principal }, args) {
    const { idempotency_key: key, ...filters } = args;
    const counted = countedBody(countedOrRefused(await services.marketCalls.catalogue(principal as SearchPrincipal, queryOf(filters), key)));
    const { replayed } = counted;
    // The page's lots are the store's JSON text, answered as the route answers them.
    const jsonText = cataloguePageJson(counted.body);
    const body = JSON.parse(jsonText) as { lots: Lot[]; next_cursor: string | null };
    const shown = body.lots.slice(0, 5).map((lot) =>
      [`${lot.auction} lot ${lot.lot_id}`, lot.name ?? `VIN ${lot.vin}`, lot.sale_date === null ? 'no sale date yet' : `sale date ${lot.sale_date.slice(0, 10)}`, lot.price === null ? null : `$${lot.price.toLocaleString('en-US')}`]
        .filter((part) => part !== null)
        .join(', '),
    );
    return {
      json: body,
      jsonText,
      summary: [
        body.lots.length === 0 ? 'No lots match on this page.' : `${count(body.lots.length, 'lot')} on this page${body.lots.length > shown.length ? `, the first ${shown.length}` : ''}: ${shown.join('; ')}.`,
        body.next_cursor === null ? 'This is the last page.' : `More follow: call again with the same arguments and cursor ${body.next_cursor} (another counted call).`,
        countedCost(principal.sandbox, replayed),
      ].join(' '),
    };
  },
});
