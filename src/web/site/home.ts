import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { VinPreviewOutcome } from '../../search/vin-preview.ts';
import { formatAuction, formatDate } from '../format.ts';

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

function presentPreview(outcome: VinPreviewOutcome): VinPreview {
  const nothing = { found: 0, auctions: '', lastSale: null, photos: 0 };
  switch (outcome.kind) {
    case 'invalid':
      return { vin: outcome.vin, error: outcome.messages[0]!.replace(/^The vin/, 'The VIN'), ...nothing };
    case 'rate_limited':
      return { vin: outcome.vin, error: 'Too many checks at once. Wait a second and try again.', ...nothing };
    case 'summary':
      return {
        vin: outcome.vin,
        error: null,
        found: outcome.found,
        auctions: listOf([...new Set(outcome.auctions.map(formatAuction))]),
        lastSale: formatDate(outcome.lastSale),
        photos: outcome.photos,
      };
  }
}

const HOME_NOTICES: Record<string, string> = {
  'logged-out': 'You are logged out.',
  'account-deleted':
    'Your account is deleted: your plan is ended, your tokens are revoked and you are logged out. We keep your invoices and the record of your searches, as the law requires us to.',
};

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
      const raw = request.query.vin;
      const preview = raw === undefined ? null : presentPreview(await app.services.vinPreview.preview(raw, request.ip));
      const plans = await app.services.payments.billing.publicPlans();
      const cheapest = plans.reduce((min, plan) => Math.min(min, plan.monthlyPriceCents), Number.POSITIVE_INFINITY);
      return reply.page('home', {
        title: 'Vehicle auction history API',
        section: 'home',
        // The public pages are for search engines too; everything else stays noindex.
        indexable: raw === undefined,
        preview,
        notice: HOME_NOTICES[request.query.done ?? ''] ?? null,
        fromPrice: Number.isFinite(cheapest) ? cheapest : null,
        exampleVin: '4JGBF7BE5AA585531',
      });
    },
  );
};

export default homeRoutes;
