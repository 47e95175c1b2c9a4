import { TOKEN_ROTATION_GRACE_MS, hashApiToken, isLiveToken, type ApiToken, type ApiTokenKind } from '../domain/api-token.ts';
import type { TokenPrincipal } from '../domain/principal.ts';
import type { Repositories } from '../storage/repositories/index.ts';
import { PrincipalCache } from './principal-cache.ts';
import type { Metrics } from '../observability/metrics.ts';

/** Enough for any honest use; a bound keeps the table (and the tokens page) small. */
export const MAX_LIVE_TOKENS = 25;

export type CreateTokenOutcome = { kind: 'created'; token: ApiToken; secret: string } | { kind: 'too-many'; limit: number };

export type RotateTokenOutcome = { kind: 'rotated'; token: ApiToken; secret: string; previous: ApiToken } | { kind: 'not-rotatable' };

/**
 * Customer API tokens: issued, listed, rotated and revoked for an account (its pages, the
 * operator's CLI), and checked on every API request. A secret is returned once, when it is made;
 * only its hash is stored.
 */
export class ApiTokenService {
  private readonly principals = new PrincipalCache();
  private readonly lookups: { cache: { inc(): void }; database: { inc(): void } } | null;

  constructor(
    private readonly repos: Repositories,
    metrics?: Metrics,
  ) {
    this.lookups = metrics ? { cache: metrics.principalLookups.labels({ source: 'cache' }), database: metrics.principalLookups.labels({ source: 'database' }) } : null;
  }

  /** Who a request with this token acts for, or null for an unknown, revoked or expired token: read afresh. */
  authenticate(secret: string, now = new Date()): Promise<TokenPrincipal | null> {
    return this.repos.tokens.authenticate(secret, now);
  }

  /**
   * The same for a search, from memory when this process read it in the last minute. Only for a
   * path whose commit re-checks the principal (storage/principal-recheck.ts) and calls `reload`
   * when it no longer holds: the search.
   */
  async authenticateForSearch(secret: string, now = new Date()): Promise<TokenPrincipal | null> {
    const hash = hashApiToken(secret);
    const cached = this.principals.get(hash);
    if (cached !== null) {
      this.lookups?.cache.inc();
      return cached;
    }
    this.lookups?.database.inc();
    const principal = await this.repos.tokens.authenticateByHash(hash, now);
    if (principal !== null) this.principals.set(hash, principal);
    return principal;
  }

  /** A principal read afresh after a commit found the cached one stale; null when its token is no longer live. */
  async reload(principal: TokenPrincipal, now = new Date()): Promise<TokenPrincipal | null> {
    const fresh = await this.repos.tokens.reload(principal.tokenId, now);
    this.principals.replace(principal.tokenId, fresh);
    return fresh;
  }

  /** Records a token's last use (minute precision is plenty for the token list). */
  async touch(tokenId: string, now = new Date()): Promise<void> {
    await this.repos.tokens.touch(tokenId, now);
    this.principals.touched(tokenId, now.toISOString());
  }

  /** Newest first, revoked and expired ones included. */
  list(accountId: string): Promise<ApiToken[]> {
    return this.repos.tokens.listForAccount(accountId);
  }

  async countLive(accountId: string, now = new Date()): Promise<number> {
    return (await this.list(accountId)).filter((token) => isLiveToken(token, now)).length;
  }

  /**
   * A new token, unless the account already has as many live (unrevoked) ones as it may; test
   * tokens count towards that bound too.
   */
  async create(accountId: string, name: string, now = new Date(), kind: ApiTokenKind = 'live'): Promise<CreateTokenOutcome> {
    if ((await this.countLive(accountId, now)) >= MAX_LIVE_TOKENS) return { kind: 'too-many', limit: MAX_LIVE_TOKENS };
    const { row, token } = await this.repos.tokens.create(accountId, name, now, kind);
    return { kind: 'created', token: row, secret: token };
  }

  /** The operator's CLI issues tokens without the page's bound: the operator decides. */
  async issue(accountId: string, name: string, now = new Date(), kind: ApiTokenKind = 'live'): Promise<{ token: ApiToken; secret: string }> {
    const { row, token } = await this.repos.tokens.create(accountId, name, now, kind);
    return { token: row, secret: token };
  }

  /** A successor for a live token; the old one keeps working for the rotation's grace period. */
  async rotate(accountId: string, tokenId: string, now = new Date()): Promise<RotateTokenOutcome> {
    const rotated = await this.repos.tokens.rotateForAccount(accountId, tokenId, new Date(now.getTime() + TOKEN_ROTATION_GRACE_MS), now);
    return rotated ? { kind: 'rotated', token: rotated.row, secret: rotated.token, previous: rotated.previous } : { kind: 'not-rotatable' };
  }

  /** False when the token is not the account's, or already revoked. */
  revoke(accountId: string, tokenId: string, now = new Date()): Promise<boolean> {
    return this.repos.tokens.revokeForAccount(accountId, tokenId, now);
  }

  /** By the secret itself (the operator's CLI). False when no live token has that value. */
  revokeBySecret(secret: string, now = new Date()): Promise<boolean> {
    return this.repos.tokens.revokeByToken(secret, now);
  }
}
