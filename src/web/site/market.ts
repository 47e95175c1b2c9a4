import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { MARKET_LOOK_BOUNDS, type MarketLookOutcome } from '../../market/market-looks.ts';
import { retryAfter } from '../../limits/limit-headers.ts';
import { translatorFor } from '../report/i18n.ts';
import { presentMarket } from '../report/market.ts';

/** What a visitor typed, shown again in the form. */
interface Asked {
  make: string;
  model: string;
  year: string;
  primary_damage: string;
}

/** The API call that answers the same figures, for the page to show beside them. */
export function marketCurl(baseUrl: string, asked: { make: string; model: string; year: number | string; primaryDamage: string | null }): string {
  const query = new URLSearchParams({ make: asked.make, model: asked.model, year: String(asked.year) });
  if (asked.primaryDamage) query.set('primary_damage', asked.primaryDamage);
  return `curl -H "Authorization: vh_live_…" \\\n  "${baseUrl}/api/v1/market?${query.toString()}"`;
}

function hours(ms: number): string {
  const count = Math.max(1, Math.ceil(ms / (60 * 60 * 1000)));
  return count === 1 ? 'an hour' : `${count} hours`;
}

/** The page's answer to a look: its status, and what the template shows. */
function presentLook(outcome: MarketLookOutcome, baseUrl: string) {
  switch (outcome.kind) {
    case 'invalid':
      return { status: 422, errors: outcome.errors, refusal: null, market: null, curl: null, retryAfterMs: null };
    case 'rate_limited':
      return { status: 429, errors: {}, refusal: 'Too many looks at once. Wait a second and try again.', market: null, curl: null, retryAfterMs: outcome.retryAfterMs };
    case 'no_looks_left':
      return {
        status: 429,
        errors: {},
        refusal: `You have used today’s ${outcome.perDay} free looks from your network. The next one frees up in about ${hours(outcome.retryAfterMs)}; with a plan, the API answers every market question you have.`,
        market: null,
        curl: null,
        retryAfterMs: outcome.retryAfterMs,
      };
    case 'value':
      return { status: 200, errors: {}, refusal: null, market: presentMarket(outcome.value, translatorFor('en')), curl: marketCurl(baseUrl, outcome.subject), retryAfterMs: null };
  }
}

/**
 * The public Market page: a visitor picks make, model and year (and a damage if they like) and
 * sees what similar cars sold for at auction in the last 12 months, the report section's figures
 * and chart, a few times a day for free, with the API call that answers the same.
 */
const marketRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { services } = app;
  const field = () => Type.Optional(Type.String({ maxLength: 200 }));
  app.get(
    '/market',
    { schema: { hide: true, querystring: Type.Object({ make: field(), model: field(), year: field(), primary_damage: field() }) } },
    async (request, reply) => {
      const { query } = request;
      const asked: Asked = { make: query.make ?? '', model: query.model ?? '', year: query.year ?? '', primary_damage: query.primary_damage ?? '' };
      const askedAny = [query.make, query.model, query.year, query.primary_damage].some((value) => value !== undefined);
      const page = {
        title: 'What similar cars sold for',
        section: 'market',
        // The empty form is for search engines too; an answer is one visitor's look.
        indexable: !askedAny,
        asked,
        perDay: services.marketLooks.perDay,
        bounds: MARKET_LOOK_BOUNDS,
        example: marketCurl(services.config.publicBaseUrl, { make: 'HONDA', model: 'ACCORD', year: 2020, primaryDamage: null }),
      };
      if (!askedAny) return reply.page('market', { ...page, errors: {}, refusal: null, market: null, curl: null });
      const look = presentLook(
        await services.marketLooks.look({ make: asked.make, model: asked.model, year: asked.year, primaryDamage: asked.primary_damage }, request.ip),
        services.config.publicBaseUrl,
      );
      if (look.retryAfterMs !== null) reply.header('retry-after', retryAfter(look.retryAfterMs));
      return reply.page('market', { ...page, ...look }, look.status);
    },
  );
};

export default marketRoutes;
