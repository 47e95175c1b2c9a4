import fp from 'fastify-plugin';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { tokenFromAuthorization } from '../../domain/api-token.ts';
import { ApiError } from '../../errors.ts';
import type { SearchPrincipal } from '../../domain/principal.ts';
import { bearerChallenge } from './bearer-challenge.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the `authenticate` hook on customer API routes. */
    principal: SearchPrincipal | null;
  }
  interface FastifyInstance {
    /** onRequest hook: a live API token of an account with a subscription in force, or a sandbox token; else 401/402. */
    authenticateCustomer: (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
  }
}

const REALM = 'vinhistory';

/**
 * Authentication runs as an onRequest hook, before the body is read or validated, because the
 * contract orders the checks: authentication, then subscription, then the VIN.
 */
export default fp(
  async (app) => {
    app.decorateRequest('principal', null);
    app.decorate('authenticateCustomer', async (request: FastifyRequest) => {
      const header = request.headers.authorization;
      const token = tokenFromAuthorization(header);
      if (token === null) throw bearerChallenge(REALM, Boolean(header));
      const principal = await app.services.apiTokens.authenticate(token);
      if (principal === null) throw bearerChallenge(REALM, true);
      // A sandbox token may be used before a plan is bought: it searches only the test catalogue.
      if (principal.subscription === null && !principal.sandbox) {
        throw new ApiError(
          'SUBSCRIPTION_REQUIRED',
          'Your account has no active subscription (expired, cancelled or unpaid). Buy or renew a plan in your personal account to search again.',
        );
      }
      request.principal = principal as SearchPrincipal;
    });
  },
  { name: 'authentication', dependencies: ['services'] },
);
