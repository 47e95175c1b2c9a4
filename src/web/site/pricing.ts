import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { MAX_LIVE_TOKENS } from '../../accounts/api-tokens.ts';
import { parseBilling, planCard } from './present.ts';

/**
 * The price list: the public plans, Standard marked as the favourite, monthly or annual prices
 * (a plain link switches between them, no script needed).
 */
const pricingRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { services } = app;
  app.get(
    '/pricing',
    { schema: { hide: true, querystring: Type.Object({ billing: Type.Optional(Type.String({ maxLength: 20 })) }) } },
    async (request, reply) => {
      const billing = parseBilling(request.query.billing) ?? 'monthly';
      const plans = await services.payments.billing.publicPlans();
      const cards = plans.map((plan) => planCard(plan, billing));
      const bestDiscount = Math.max(0, ...cards.map((card) => card.discountPercent));
      return reply.page('pricing', { title: 'Pricing', section: 'pricing', indexable: true, billing, cards, bestDiscount, checkoutProvider: services.payments.checkoutProvider, maxTokens: MAX_LIVE_TOKENS });
    },
  );
};

export default pricingRoutes;
