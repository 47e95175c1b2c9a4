import { Type, type Static } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { LotSchema } from '../../../domain/lot.ts';
import type { MarketValue } from '../../../domain/market.ts';
import { MAX_NAME_CHARS } from '../../../market/market-query.ts';
import { CLOSEST } from '../../../market/market-service.ts';
import { errorRef, retryAfterHeader, SEARCH_LIMITED, searchErrorResponses } from '../schemas.ts';
import { answerMarketCall, rawQuery, refuseSandbox } from './market-answer.ts';
import { IdempotencyHeaders, limitHeaders, replayedHeader } from './search.ts';

const { 413: _bodyTooLarge, ...errorResponses } = searchErrorResponses;

const Dollars = (description: string) => Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], { description: `${description} Whole dollars, rounded half up; null without comparables.` });

/** The market value's schema (also the MCP tool's output, src/mcp/tools/market-value.ts). */
export const marketValue = (options: { description: string; headers: Record<string, unknown> }) =>
  Type.Object(
    {
      vehicle: Type.Object(
        { make: Type.String(), model: Type.String(), year: Type.Integer() },
        { additionalProperties: false, description: 'The vehicle valued: from its stored lots (the newest that names each), else its decoded VIN; or as asked.' },
      ),
      window: Type.Object(
        { from: Type.String({ format: 'date-time' }), to: Type.String({ format: 'date-time' }) },
        { additionalProperties: false, description: 'The sale dates the comparables fall in (inclusive): from the start of the UTC day `months` months ago to now.' },
      ),
      comparables: Type.Object(
        {
          count: Type.Integer({ minimum: 0, description: 'Sold lots (a sale date in the window, a price above 0) of the same make and model, a year within one, other VINs, the damage when asked.' }),
          price: Type.Object(
            { min: Dollars('Lowest.'), p25: Dollars('25th percentile (linear, as numpy).'), median: Dollars('Median.'), p75: Dollars('75th percentile.'), max: Dollars('Highest.') },
            { additionalProperties: false },
          ),
          share_of_retail_value: Type.Object(
            { median: Type.Union([Type.Number({ minimum: 0 }), Type.Null()], { description: 'Median of price / retail value over comparables with a retail value, two decimals; null when none.' }) },
            { additionalProperties: false },
          ),
        },
        { additionalProperties: false },
      ),
      by_damage: Type.Array(
        Type.Object({ primary_damage: Type.String(), count: Type.Integer({ minimum: 1 }), median_price: Type.Integer({ minimum: 0 }) }, { additionalProperties: false }),
        { description: 'Comparables by primary damage (compared on its letters and digits), most first; named by the most frequent spelling.' },
      ),
      by_month: Type.Array(
        Type.Object({ month: Type.String({ pattern: '^[0-9]{4}-[0-9]{2}$' }), count: Type.Integer({ minimum: 1 }), median_price: Type.Integer({ minimum: 0 }) }, { additionalProperties: false }),
        { description: 'Comparables by UTC month of sale, oldest first; months without sales left out.' },
      ),
      closest: Type.Array(Type.Ref(LotSchema), {
        maxItems: CLOSEST,
        description: `Up to ${CLOSEST} comparables: same year first, then nearest odometer to the vehicle's latest known one, then newest sale.`,
      }),
    },
    { additionalProperties: false, ...options },
  );

// The schema answers exactly the domain's shape (domain/market.ts): a change of one fails the typecheck.
type Answered = Static<ReturnType<typeof marketValue>>;
const _sameShape: [MarketValue extends Omit<Answered, 'closest'> ? true : never, Omit<Answered, 'closest'> extends Omit<MarketValue, 'closest'> ? true : never] = [true, true];

const MarketQuerySchema = Type.Object(
  {
    vin: Type.Optional(Type.String({ description: 'The vehicle by VIN (its make, model and year from its stored lots, else the decoded VIN). Or give make, model and year.', examples: ['1HGCV1F36LA000011'] })),
    make: Type.Optional(Type.String({ description: 'With model and year, instead of vin.', maxLength: MAX_NAME_CHARS, examples: ['HONDA'] })),
    model: Type.Optional(Type.String({ description: 'With make and year.', maxLength: MAX_NAME_CHARS, examples: ['ACCORD'] })),
    year: Type.Optional(Type.String({ description: 'With make and model: the model year, 1886-2100.', pattern: '^[0-9]{4}$', examples: ['2020'] })),
    primary_damage: Type.Optional(Type.String({ description: 'Only comparables with this primary damage (compared on its letters and digits).', maxLength: MAX_NAME_CHARS })),
    months: Type.Optional(Type.String({ description: 'The window in months, 1-36 (default 12).', pattern: '^[0-9]{1,2}$', examples: ['12'] })),
  },
  { additionalProperties: false },
);

/** Market value: what similar cars sold for, counted like a search (contract, "Market value"). */
const marketRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/api/v1/market',
    {
      onRequest: app.authenticateSearch,
      attachValidation: true,
      schema: {
        tags: ['Catalogue and market'],
        security: [{ apiToken: [] }],
        summary: 'What similar cars sold for',
        description:
          'The salvage-auction comparables of a vehicle (by VIN, or by make, model and year): their count, price spread, share of retail value, by damage and by month, and the closest sales. ' +
          'Counted like a search (a VIN that tells no vehicle is a counted 404), with the same limit headers and Idempotency-Key rule (a repeat of the key must ask the same query). ' +
          'Checks in order: token, subscription, a live token, parameters, per-second rate, monthly quota.',
        operationId: 'marketValue',
        querystring: MarketQuerySchema,
        headers: IdempotencyHeaders,
        response: {
          ...errorResponses,
          200: marketValue({ description: 'The market value; with no comparables, count 0, null figures and empty lists.', headers: { ...limitHeaders, ...replayedHeader } }),
          403: errorRef('LIVE_TOKEN_REQUIRED', 'A sandbox token (`vh_test_`): the market reads live data and takes only live tokens.'),
          404: errorRef('NO_RECORDS', 'The VIN is valid but neither its stored lots nor its decoding tell its make, model and year. Counts against the quota.', { ...limitHeaders, ...replayedHeader }),
          422: errorRef(
            ['VALIDATION_FAILED', 'IDEMPOTENCY_CONFLICT'],
            'A bad or unknown parameter, or neither vin nor make, model and year (errors.<parameter> says what is wrong), a malformed Idempotency-Key, or one used for another query in the last 24 hours.',
          ),
          429: errorRef(['RATE_LIMITED', 'QUOTA_EXCEEDED'], SEARCH_LIMITED, { ...limitHeaders, ...retryAfterHeader }),
        },
      },
    },
    async (request, reply) => {
      refuseSandbox(request);
      return answerMarketCall(reply, await app.services.marketCalls.market(request.principal!, rawQuery(request), request.headers['idempotency-key']));
    },
  );
};

export default marketRoutes;
