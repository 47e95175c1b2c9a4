import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { checkVin } from '../../domain/vin.ts';
import { formatAuction, formatDate } from '../format.ts';

/** VIN checks a second, per network address: the landing page's box is for people, not for crawlers. */
const PREVIEW_RATE = 2;

export interface VinPreview {
  vin: string;
  error: string | null;
  found: number;
  auctions: string;
  lastSale: string | null;
  photos: number;
}

function listOf(words: string[]): string {
  if (words.length <= 1) return words.join('');
  return `${words.slice(0, -1).join(', ')} and ${words.at(-1)}`;
}

/**
 * The landing page: what the API does, and a VIN box that says what a report for that VIN would
 * hold (how many auction records we have, from which auctions), without the records themselves:
 * those come from a search with a token.
 */
const homeRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/',
    { schema: { hide: true, querystring: Type.Object({ vin: Type.Optional(Type.String({ maxLength: 64 })), done: Type.Optional(Type.String({ maxLength: 40 })) }) } },
    async (request, reply) => {
      let preview: VinPreview | null = null;
      const raw = request.query.vin;
      if (raw !== undefined) {
        const check = checkVin(raw);
        if (!check.ok) {
          preview = { vin: raw.trim(), error: check.errors[0]!.replace(/^The vin/, 'The VIN'), found: 0, auctions: '', lastSale: null, photos: 0 };
        } else {
          const rate = await app.services.rateLimiter.consume(`vin-preview:${request.ip}`, PREVIEW_RATE);
          if (!rate.allowed) {
            preview = { vin: check.vin, error: 'Too many checks at once. Wait a second and try again.', found: 0, auctions: '', lastSale: null, photos: 0 };
          } else {
            const lots = await app.services.repos.lots.findByVin(check.vin);
            const auctions = [...new Set(lots.map((lot) => formatAuction(lot.auction)))];
            const lastSale = lots.find((lot) => lot.sale_date !== null)?.sale_date ?? null;
            preview = {
              vin: check.vin,
              error: null,
              found: lots.length,
              auctions: listOf(auctions),
              lastSale: formatDate(lastSale),
              photos: lots.reduce((sum, lot) => sum + lot.images.length, 0),
            };
          }
        }
      }
      const plans = await app.services.payments.billing.publicPlans();
      const cheapest = plans.reduce((min, plan) => Math.min(min, plan.monthlyPriceCents), Number.POSITIVE_INFINITY);
      return reply.page('home', {
        title: 'Vehicle auction history API',
        section: 'home',
        // The public pages are for search engines too; everything else stays noindex.
        indexable: raw === undefined,
        preview,
        notice: request.query.done === 'logged-out' ? 'You are logged out.' : null,
        fromPrice: Number.isFinite(cheapest) ? cheapest : null,
        exampleVin: '4JGBF7BE5AA585531',
      });
    },
  );
};

export default homeRoutes;
