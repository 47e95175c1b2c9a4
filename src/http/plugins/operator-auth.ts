import fp from 'fastify-plugin';
import type { FastifyRequest } from 'fastify';
import { operatorTokenFromAuthorization } from '../../domain/operator-token.ts';
import type { OperatorPrincipal } from '../../domain/principal.ts';
import { bearerChallenge } from './bearer-challenge.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the `authenticateOperator` hook on admin routes. */
    operator: OperatorPrincipal | null;
  }
  interface FastifyInstance {
    /** onRequest hook: a live operator token (vh_op_...), or 401. A customer token is not one. */
    authenticateOperator: (request: FastifyRequest) => Promise<void>;
  }
}

const REALM = 'vinhistory-admin';

/**
 * Authentication of the admin API, as an onRequest hook: it runs before the body is read, so an
 * unauthenticated upload of a gigabyte is refused at its first bytes. Only operator tokens
 * (operator_tokens table) pass; a customer's API token is refused like any unknown value, with the
 * same body as the customer API's 401.
 */
export default fp(
  async (app) => {
    app.decorateRequest('operator', null);
    app.decorate('authenticateOperator', async (request: FastifyRequest) => {
      const header = request.headers.authorization;
      const token = operatorTokenFromAuthorization(header);
      const operator = token === null ? null : await app.services.operatorTokens.authenticate(token);
      if (operator === null) throw bearerChallenge(REALM, Boolean(header));
      request.operator = operator;
    });
  },
  { name: 'operator-auth', dependencies: ['services'] },
);
