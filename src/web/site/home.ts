import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { VinPreviewOutcome } from '../../search/vin-preview.ts';
import { formatAuction, formatDate } from '../format.ts';

export interface VinPreview {
  /** What the box shows again: what was typed (a VIN normalised, a lot number or link as given). */
  vin: string;
  error: string | null;
  /** Asked by lot: `Lot 12345678 at Copart`, with the VIN it found (`vin` then keeps the input). */
  lot: { text: string; vin: string } | null;
  /** Asked by lot, and no such lot is known. */
  lotMissing: string | null;
  found: number;
  auctions: string;
  lastSale: string | null;
  photos: number;
}

function listOf(words: string[]): string {
  if (words.length <= 1) return words.join('');
  return `${words.slice(0, -1).join(', ')} and ${words.at(-1)}`;
}

function presentPreview(outcome: VinPreviewOutcome, input: string): VinPreview {
  const nothing = { found: 0, auctions: '', lastSale: null, photos: 0, lot: null, lotMissing: null };
  switch (outcome.kind) {
    case 'invalid':
      return { ...nothing, vin: outcome.vin, error: outcome.messages[0]!.replace(/^The vin/, 'The VIN') };
    case 'rate_limited':
      return { ...nothing, vin: outcome.vin, error: 'Too many checks at once. Wait a second and try again.' };
    case 'lot_not_found':
      return {
        ...nothing,
        vin: outcome.input,
        error: null,
        lotMissing: outcome.auction === null ? `No auction lot ${outcome.lotId}` : `No lot ${outcome.lotId} at ${formatAuction(outcome.auction)}`,
      };
    case 'summary':
      return {
        vin: outcome.lot ? input.trim() : outcome.vin,
        error: null,
        lot: outcome.lot ? { text: `Lot ${outcome.lot.lotId} at ${formatAuction(outcome.lot.auction)}`, vin: outcome.vin } : null,
        lotMissing: null,
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
 * The landing page: what the API does, and a box that says what a report for a vehicle would hold
 * (how many auction records we have, from which auctions), without the records themselves: those
 * come from a search with a token. The box takes a VIN, a lot number, or a Copart or IAAI lot link.
 */
const homeRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/',
    // `vin` takes a lot link too: Copart's carry the vehicle's description, well past a VIN's length.
    { schema: { hide: true, querystring: Type.Object({ vin: Type.Optional(Type.String({ maxLength: 300 })), done: Type.Optional(Type.String({ maxLength: 40 })) }) } },
    async (request, reply) => {
      const raw = request.query.vin;
      const preview = raw === undefined ? null : presentPreview(await app.services.vinPreview.preview(raw, request.ip), raw);
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
