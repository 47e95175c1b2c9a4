import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import billingRoutes from './billing.ts';
import brandRoutes from './brand.ts';
import overviewRoutes from './overview.ts';
import settingsRoutes from './settings.ts';
import tokensRoutes from './tokens.ts';
import usageRoutes from './usage.ts';
import watchesRoutes from './watches.ts';
import webhookRoutes from './webhook.ts';
// Batches (issue 26).
import batchesPageRoutes from './batches.ts';

/**
 * The personal account, under /account: every page needs a logged-in customer and shows only what
 * belongs to that customer's account (each query is scoped by the session's account id, never by
 * an id from the request alone).
 */
const accountRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.decorateRequest('account', null);
  app.addHook('onRequest', async (request, reply) => {
    const session = request.webSession;
    const account = session ? await app.services.accounts.findById(session.accountId) : undefined;
    if (!account) {
      // After log-in the customer comes back to the page asked for (a GET); a form sent without a
      // session cannot be replayed, so it goes to the account's home.
      const next = request.method === 'GET' ? request.url.slice(request.url.indexOf('/account')) : '/account';
      return reply.seeOther(`/login?next=${encodeURIComponent(next)}`);
    }
    request.account = account;
  });

  await app.register(overviewRoutes);
  await app.register(billingRoutes);
  await app.register(tokensRoutes);
  await app.register(usageRoutes);
  await app.register(settingsRoutes);
  await app.register(watchesRoutes);
  await app.register(webhookRoutes);
  await app.register(brandRoutes);
  // Batches (issue 26).
  await app.register(batchesPageRoutes);
};

export default accountRoutes;
