import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { LotSchema } from '../../../domain/lot.ts';
import { CATALOGUE_SORTS, cataloguePageJson } from '../../../domain/catalogue.ts';
import { DEFAULT_LIMIT, MAX_CURSOR_CHARS, MAX_LIMIT, MAX_NAME_CHARS } from '../../../market/market-query.ts';
import { errorRef, retryAfterHeader, SEARCH_LIMITED, searchErrorResponses } from '../schemas.ts';
import { answerMarketCall, rawQuery, refuseSandbox } from './market-answer.ts';
import { IdempotencyHeaders, limitHeaders, replayedHeader } from './search.ts';

const { 413: _bodyTooLarge, 404: _noRecords, ...errorResponses } = searchErrorResponses;

const text = (description: string, maxLength = MAX_NAME_CHARS) => Type.Optional(Type.String({ description, maxLength }));
const whole = (description: string, example: string) => Type.Optional(Type.String({ description, pattern: '^[0-9]{1,10}$', examples: [example] }));

/** Every parameter in words; the service checks them (a bad one, or an unknown one, is 422 with errors.<parameter>). */
export const CatalogueQuerySchema = Type.Object(
  {
    make: text('Make, compared on its letters and digits alone, case and accents ignored (HONDA = Honda; MERCEDES-BENZ = Mercedes Benz).'),
    model: text('Model, compared the same way (F-150 = F150 = f 150).'),
    primary_damage: text('Primary damage, compared the same way (FRONT END = Front end = front-end).'),
    document: text('Title or document type: the whole value, case-insensitive.'),
    auction: Type.Optional(Type.String({ description: 'Auction, a lower-case word (copart, iaai, ...).', maxLength: 40 })),
    year_min: whole('Model year from (1886-2100).', '2018'),
    year_max: whole('Model year to (1886-2100), not below year_min.', '2020'),
    odometer_max: whole('Odometer at most (0-9999999).', '120000'),
    price_min: whole('Price from, whole dollars.', '1000'),
    price_max: whole('Price to, whole dollars, not below price_min.', '20000'),
    sale_from: Type.Optional(Type.String({ description: 'Sale date from (inclusive): an ISO date (the start of that UTC day) or date-time with a zone.', maxLength: 40, examples: ['2026-01-01'] })),
    sale_to: Type.Optional(Type.String({ description: 'Sale date to (inclusive): an ISO date (the whole UTC day) or date-time with a zone.', maxLength: 40, examples: ['2026-11-30'] })),
    status: Type.Optional(Type.String({ description: '`upcoming`: no sale date or a future one; `sold`: a sale date in the past.', enum: ['upcoming', 'sold'] })),
    location_zip: text('Postal code of the lot location, the whole value.', 20),
    vin: Type.Optional(
      Type.String({
        description: 'A whole VIN, or a masked one as auctions show it: 17 characters, at least the first 11 known, the unknown rest `*` (every VIN with those known characters).',
        maxLength: 17,
        examples: ['5N1DL0MM5KC******'],
      }),
    ),
    sort: Type.Optional(
      Type.String({
        description: 'Order: sale_date_desc (default; lots without a sale date first, as upcoming), sale_date_asc (without one last), price_asc or price_desc (without a price last). Ties: auction ascending, then lot id descending.',
        enum: [...CATALOGUE_SORTS],
      }),
    ),
    limit: Type.Optional(Type.String({ description: `Lots per page, 1-${MAX_LIMIT} (default ${DEFAULT_LIMIT}).`, pattern: '^[0-9]{1,3}$', examples: ['25'] })),
    cursor: Type.Optional(Type.String({ description: 'The next_cursor of the previous page, with the same other parameters.', maxLength: MAX_CURSOR_CHARS })),
  },
  { additionalProperties: false },
);

/** The 200 answer's schema: it documents the page, which cataloguePageJson writes (a test holds one to the other). */
export const cataloguePage = (options: { description: string; headers: Record<string, unknown> }) => Type.Object(
  {
    lots: Type.Array(Type.Ref(LotSchema), { description: 'The page: each lot exactly as in a Report (archived photo URLs included).', maxItems: MAX_LIMIT }),
    next_cursor: Type.Union([Type.String(), Type.Null()], { description: 'The cursor of the next page; null on the last page.' }),
  },
  { additionalProperties: false, ...options },
);

/** Catalogue search: lots by what they are, counted like a search (contract, "Catalogue search"). */
const catalogueRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/api/v1/lots',
    {
      onRequest: app.authenticateSearch,
      attachValidation: true,
      schema: {
        tags: ['Catalogue and market'],
        security: [{ apiToken: [] }],
        summary: 'Search the catalogue of lots',
        description:
          'Finds lots by make, model, damage, document, auction, year, odometer, price, sale date, status, location and VIN (whole or masked), all combined with AND, ' +
          'a page at a time with a stable cursor (a lot stored after the first page is never shown twice nor makes another be skipped). ' +
          'Counted like a search (an empty page too), with the same limit headers and Idempotency-Key rule (a repeat of the key must ask the same query). ' +
          'Checks in order: token, subscription, a live token, parameters, per-second rate, monthly quota.',
        operationId: 'catalogueSearch',
        querystring: CatalogueQuerySchema,
        headers: IdempotencyHeaders,
        response: {
          ...errorResponses,
          200: cataloguePage({ description: 'One page of lots in the order asked, and the cursor of the next.', headers: { ...limitHeaders, ...replayedHeader } }),
          403: errorRef('LIVE_TOKEN_REQUIRED', 'A sandbox token (`vh_test_`): the catalogue reads live data and takes only live tokens.'),
          422: errorRef(
            ['VALIDATION_FAILED', 'IDEMPOTENCY_CONFLICT'],
            'A bad or unknown parameter (errors.<parameter> says what is wrong), a malformed Idempotency-Key, or one used for another query in the last 24 hours.',
          ),
          429: errorRef(['RATE_LIMITED', 'QUOTA_EXCEEDED'], SEARCH_LIMITED, { ...limitHeaders, ...retryAfterHeader }),
        },
      },
    },
    async (request, reply) => {
      // Every parameter is the service's to check, in its own words (the schema documents them).
      refuseSandbox(request);
      const outcome = await app.services.marketCalls.catalogue(request.principal!, rawQuery(request), request.headers['idempotency-key']);
      if (outcome.kind !== 'found') return answerMarketCall(reply, outcome);
      // The lots are the store's JSON text: the body is written here, not by the route's serialiser
      // (cataloguePageJson keeps to the 200 schema above, which still documents the answer).
      reply.header('content-type', 'application/json; charset=utf-8');
      return answerMarketCall(reply, { ...outcome, body: cataloguePageJson(outcome.body) });
    },
  );
};

export default catalogueRoutes;
