import { canSearch, type TokenPrincipal } from '../domain/principal.ts';

/** How long a principal is reused before it is read again (what the commit does not re-check: the brand's report address, last use). */
export const PRINCIPAL_TTL_MS = 60_000;
/** Bounds the memory: the least recently stored entries go first. */
export const PRINCIPAL_CACHE_SIZE = 10_000;

interface Entry {
  principal: TokenPrincipal;
  storedAt: number;
}

/**
 * The search path's principals, by the hash of their token (never the secret itself). Reusing
 * one is safe only because every search's commit re-checks the token row and the subscription in
 * force (storage/principal-recheck.ts); an entry the commit found stale is replaced at once.
 * Unknown tokens are never cached: a 401 always reads the database. Nor is a principal that cannot
 * search (no plan in force, not a sandbox token): its 402 is decided before any commit, so a cached
 * one would keep refusing for a minute an account that has just bought a plan.
 */
export class PrincipalCache {
  private readonly byHash = new Map<string, Entry>();
  private readonly hashOfToken = new Map<string, string>();

  constructor(
    private readonly ttlMs = PRINCIPAL_TTL_MS,
    private readonly maxEntries = PRINCIPAL_CACHE_SIZE,
    private readonly clock: () => number = Date.now,
  ) {}

  get(hash: string): TokenPrincipal | null {
    const entry = this.byHash.get(hash);
    if (entry === undefined) return null;
    if (this.clock() - entry.storedAt >= this.ttlMs) {
      this.delete(hash, entry.principal.tokenId);
      return null;
    }
    return entry.principal;
  }

  set(hash: string, principal: TokenPrincipal): void {
    this.byHash.delete(hash);
    if (!canSearch(principal)) {
      this.delete(hash, principal.tokenId);
      return;
    }
    if (this.byHash.size >= this.maxEntries) {
      const [oldestHash, oldest] = this.byHash.entries().next().value as [string, Entry];
      this.delete(oldestHash, oldest.principal.tokenId);
    }
    this.byHash.set(hash, { principal, storedAt: this.clock() });
    this.hashOfToken.set(principal.tokenId, hash);
  }

  /** Replaces the token's entry with what was read afresh, or drops it (null: no longer live; or it cannot search). */
  replace(tokenId: string, principal: TokenPrincipal | null): void {
    const hash = this.hashOfToken.get(tokenId);
    if (hash === undefined) return;
    if (principal === null) this.delete(hash, tokenId);
    else this.set(hash, principal);
  }

  /** Keeps the cached last-use time current, so that the minute's touch is not repeated per search. */
  touched(tokenId: string, at: string): void {
    const hash = this.hashOfToken.get(tokenId);
    const entry = hash === undefined ? undefined : this.byHash.get(hash);
    if (entry !== undefined) entry.principal = { ...entry.principal, lastUsedAt: at };
  }

  get size(): number {
    return this.byHash.size;
  }

  private delete(hash: string, tokenId: string): void {
    this.byHash.delete(hash);
    if (this.hashOfToken.get(tokenId) === hash) this.hashOfToken.delete(tokenId);
  }
}
