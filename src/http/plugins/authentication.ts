import fp from 'fastify-plugin';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { tokenFromAuthorization } from '../../domain/api-token.ts';
import { ApiError } from '../../errors.ts';
import { canSearch, type SearchPrincipal, type TokenPrincipal } from '../../domain/principal.ts';
import { bearerChallenge } from './bearer-challenge.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the `authenticate` hook on customer API routes. */
    principal: SearchPrincipal | null;
    /** Set by `authenticateAccount`: the token's account, whether or not it has a plan in force. */
    tokenPrincipal: TokenPrincipal | null;
    /** Set by `authenticateSearch`: `principal` may come from this process's cache. */
    principalFromCache: boolean;
    /**
     * For a principal that may come from the cache: what reading it afresh refuses (401, 402), else
     * null. The error handler asks it before answering a refusal the search service never saw (a
     * body that cannot be read, a field missing): nothing re-checks those, and the token and the
     * subscription come first in the contract's order of checks.
     */
    staleSearchPrincipalRefusal: () => Promise<ApiError | null>;
  }
  interface FastifyInstance {
    /** onRequest hook: a live API token of an account with a subscription in force, or a sandbox token; else 401/402. */
    authenticateCustomer: (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
    /**
     * The same for a search: the principal may come from this process's cache, because the
     * search's commit re-checks it (storage/principal-recheck.ts). Only for routes that commit a search.
     */
    authenticateSearch: (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
    /**
     * onRequest hook: a live API token, with or without a subscription in force, else 401 (403 for
     * a sandbox token): for what an account manages rather than buys (its watches, its webhook
     * endpoint and deliveries).
     */
    authenticateAccount: (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
    /**
     * onRequest hook of the MCP endpoint (src/mcp/): any token the API takes, live or sandbox, with
     * or without a plan in force, else 401; each tool then applies its API operation's own checks.
     * Sets `tokenPrincipal`, which may come from the search path's cache: the endpoint reads it
     * afresh for every call that no search commit re-checks.
     */
    authenticateToken: (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
  }
}

const REALM = 'vinhistory';

/** The 401 for a token that is unknown, revoked or expired. */
export const invalidTokenError = (): ApiError => bearerChallenge(REALM, true);

/** The 402 for a live token of an account with no subscription in force. */
export const subscriptionRequiredError = (): ApiError =>
  new ApiError(
    'SUBSCRIPTION_REQUIRED',
    'Your account has no active subscription (expired, cancelled or unpaid). Buy or renew a plan in your personal account to search again.',
  );

/** The 403 for a sandbox token on what acts on live data (watches, the webhook). */
export const liveTokenRequiredError = (): ApiError =>
  new ApiError('LIVE_TOKEN_REQUIRED', 'A sandbox token cannot use watches or the webhook: they act on live data. Use a live token (vh_live_) of the account.');

/**
 * Authentication runs as an onRequest hook, before the body is read or validated, because the
 * contract orders the checks: authentication, then subscription, then the VIN.
 */
export default fp(
  async (app) => {
    app.decorateRequest('principal', null);
    app.decorateRequest('tokenPrincipal', null);
    app.decorateRequest('principalFromCache', false);
    const { apiTokens } = app.services;
    app.decorateRequest('staleSearchPrincipalRefusal', async function (this: FastifyRequest): Promise<ApiError | null> {
      if (!this.principalFromCache || this.principal === null) return null;
      const fresh = await apiTokens.reload(this.principal);
      if (fresh === null) return invalidTokenError();
      if (!canSearch(fresh)) return subscriptionRequiredError();
      return null;
    });
    /** `cached`: the search path's principal cache, which every search's commit re-checks. */
    const principalOf = async (request: FastifyRequest, cached: boolean): Promise<TokenPrincipal> => {
      const header = request.headers.authorization;
      const token = tokenFromAuthorization(header);
      if (token === null) throw bearerChallenge(REALM, Boolean(header));
      const principal = await (cached ? apiTokens.authenticateForSearch(token) : apiTokens.authenticate(token));
      if (principal === null) throw invalidTokenError();
      return principal;
    };
    // What an account manages (watches, its webhook) is read afresh: nothing re-checks it later.
    app.decorate('authenticateAccount', async (request: FastifyRequest) => {
      const principal = await principalOf(request, false);
      // Watches and the webhook act on live lots and the account's live endpoint: a sandbox token,
      // which sees only the test catalogue, must not set them, nor read live lots in the deliveries.
      if (principal.sandbox) throw liveTokenRequiredError();
      request.tokenPrincipal = principal;
    });
    const customer = (cached: boolean) => async (request: FastifyRequest) => {
      const principal = await principalOf(request, cached);
      // A sandbox token may be used before a plan is bought: it searches only the test catalogue.
      if (!canSearch(principal)) throw subscriptionRequiredError();
      request.principal = principal;
      request.principalFromCache = cached;
    };
    app.decorate('authenticateToken', async (request: FastifyRequest) => {
      request.tokenPrincipal = await principalOf(request, true);
    });
    app.decorate('authenticateCustomer', customer(false));
    app.decorate('authenticateSearch', customer(true));
  },
  { name: 'authentication', dependencies: ['services'] },
);
