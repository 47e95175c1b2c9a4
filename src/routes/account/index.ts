import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import type { AccountRow } from '../../db/schema.ts';
import type { CustomerServices } from '../../services/accounts/customer-services.ts';
import billingRoutes from './billing.ts';
import overviewRoutes from './overview.ts';
import settingsRoutes from './settings.ts';
import tokensRoutes from './tokens.ts';
import usageRoutes from './usage.ts';

export interface AccountRouteOptions {
  services: CustomerServices;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The logged-in customer's account (account pages only). */
    account: AccountRow | null;
  }
}

/** The logged-in account; the scope's guard has made sure there is one. */
export function accountOf(request: FastifyRequest): AccountRow {
  if (!request.account) throw new Error('account page reached without a logged-in account');
  return request.account;
}

/**
 * The personal account, under /account: every page needs a logged-in customer and shows only what
 * belongs to that customer's account (each query is scoped by the session's account id, never by
 * an id from the request alone).
 */
const accountRoutes: FastifyPluginAsyncTypebox<AccountRouteOptions> = async (app, options) => {
  app.decorateRequest('account', null);
  app.addHook('onRequest', async (request, reply) => {
    const session = request.webSession;
    const account = session ? await app.deps.repos.accounts.findById(session.accountId) : undefined;
    if (!account) {
      // After log-in the customer comes back to the page asked for (a GET); a form sent without a
      // session cannot be replayed, so it goes to the account's home.
      const next = request.method === 'GET' ? request.url.slice(request.url.indexOf('/account')) : '/account';
      return reply.seeOther(`/login?next=${encodeURIComponent(next)}`);
    }
    request.account = account;
  });

  // Only the services: the options object also carries this scope's prefix, which must not apply twice.
  const children = { services: options.services };
  await app.register(overviewRoutes, children);
  await app.register(billingRoutes, children);
  await app.register(tokensRoutes, children);
  await app.register(usageRoutes, children);
  await app.register(settingsRoutes, children);
};

export default accountRoutes;
