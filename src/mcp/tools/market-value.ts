import { Type } from '@sinclair/typebox';
import type { SearchPrincipal } from '../../domain/principal.ts';
import { marketValue as marketValueSchema } from '../../http/api/v1/market.ts';
import { countedOrRefused, marketSandboxError } from '../../http/api/v1/market-answer.ts';
import { MAX_NAME_CHARS } from '../../market/market-query.ts';
import { CLOSEST } from '../../market/market-service.ts';
import { countedBody, countedCost, queryOf } from '../counted-answer.ts';
import { IdempotencyKeyArgument, LotOutput } from '../schemas.ts';
import { defineTool } from '../tool.ts';

const answered = marketValueSchema({ description: 'The market value.', headers: {} });
const dollars = (value: number | null) => (value === null ? 'n/a' : `$${value.toLocaleString('en-US')}`);

/** GET /api/v1/market as a tool: counted as that call. */
export const marketValue = defineTool({
  name: 'market_value',
  title: 'What similar cars sold for',
  description:
    'What similar vehicles sold for at salvage auctions: give a vin (its make, model and year come from its stored lots or its decoding), or make, model and year. ' +
    'Comparables are sold lots of the same make and model, a model year within one, of other VINs, in the last months (12 by default, 1-36), narrowed to a primary_damage when given. ' +
    `Answers their count, price spread (min, p25, median, p75, max in whole dollars), median share of retail value, counts and medians by damage and by month, and the ${CLOSEST} closest sales. ` +
    'Counted as one call against the monthly quota (a VIN that tells no vehicle too); needs a live token (vh_live_).',
  access: 'search',
  sandboxRefusal: marketSandboxError,
  input: Type.Object(
    {
      vin: Type.Optional(Type.String({ maxLength: 64, description: 'The vehicle by VIN; or give make, model and year.' })),
      make: Type.Optional(Type.String({ maxLength: MAX_NAME_CHARS, description: 'With model and year, instead of vin, e.g. HONDA.' })),
      model: Type.Optional(Type.String({ maxLength: MAX_NAME_CHARS, description: 'With make and year, e.g. ACCORD.' })),
      year: Type.Optional(Type.Integer({ minimum: 1886, maximum: 2100, description: 'With make and model: the model year.' })),
      primary_damage: Type.Optional(Type.String({ maxLength: MAX_NAME_CHARS, description: 'Only comparables with this primary damage, e.g. FRONT END.' })),
      months: Type.Optional(Type.Integer({ minimum: 1, maximum: 36, description: 'The window in months, 1-36 (default 12).' })),
      idempotency_key: IdempotencyKeyArgument,
    },
    { additionalProperties: false },
  ),
  output: Type.Object({ ...answered.properties, closest: Type.Array(LotOutput, { maxItems: CLOSEST }) }, { title: 'MarketValue', additionalProperties: false }),
  // Not read-only: each call spends quota.
  annotations: { title: 'What similar cars sold for', readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  async call({ services, principal }, args) {
    const { idempotency_key: key, ...query } = args;
    const { body, replayed } = countedBody(countedOrRefused(await services.marketCalls.market(principal as SearchPrincipal, queryOf(query), key)));
    const { vehicle, window, comparables } = body;
    const { price } = comparables;
    const [damage] = body.by_damage;
    const figures =
      comparables.count === 0
        ? 'no comparable sales in that window.'
        : `${comparables.count.toLocaleString('en-US')} comparable sales, median ${dollars(price.median)} (p25 ${dollars(price.p25)}, p75 ${dollars(price.p75)}; from ${dollars(price.min)} to ${dollars(price.max)})` +
          (comparables.share_of_retail_value.median === null ? '.' : `, a median ${comparables.share_of_retail_value.median} of retail value.`) +
          (damage ? ` Most common damage: ${damage.primary_damage} (${damage.count}, median ${dollars(damage.median_price)}).` : '');
    return {
      json: body,
      summary: `${vehicle.year} ${vehicle.make} ${vehicle.model}, sales from ${window.from.slice(0, 10)} to ${window.to.slice(0, 10)}: ${figures} ${countedCost(principal.sandbox, replayed)}`,
    };
  },
});
