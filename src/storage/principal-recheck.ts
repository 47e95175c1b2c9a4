import { sql, type Kysely } from 'kysely';
import { sameSubscription, type TokenPrincipal } from '../domain/principal.ts';
import { PreparedQuery, runSteps, type Step } from './prepared-query.ts';
import type { Database } from './schema.ts';
import { subscriptionInForce } from './subscription-in-force.ts';

/** A live token's row as the re-check reads it. */
export interface LiveTokenRow {
  id: string;
  tokenBrandId: string | null;
  tokenBrandBaseUrl: string | null;
  defaultBrandBaseUrl: string | null;
}

/** The report address a token's reports use: its own brand's (which decides entirely, even with none), else the account's default brand's; null for ours. */
export function reportBaseUrlOf(row: LiveTokenRow): string | null {
  return row.tokenBrandId !== null ? row.tokenBrandBaseUrl : row.defaultBrandBaseUrl;
}

/** The subscription in force for an account at a moment, as a search relies on it. */
export interface SubscriptionInForceRow {
  id: string;
  startedAt: string;
  monthlyQuota: number;
  ratePerSecond: number;
}

/**
 * What a search relied on from its principal, read again inside its commit transaction: the
 * token row by primary key (still live) and the account's subscription in force (the same one,
 * on the same plan figures). The search path keeps principals in memory (contract, "Tokens and
 * caching"); this re-check is what makes that cache unable to let a revoked token, a cancelled
 * subscription or an old plan's quota through. Both statements are index probes; each dialect's
 * search commit runs them its own way (SQLite synchronously on the driver).
 */
export class PrincipalRecheck {
  readonly liveToken: PreparedQuery<{ tokenId: string; at: string }, LiveTokenRow>;
  readonly subscriptionInForce: PreparedQuery<{ accountId: string; at: string }, SubscriptionInForceRow>;

  constructor(k: Kysely<Database>) {
    // With the token, the report address its brand gives now (the token's own brand, else the
    // account's default): report_url follows a brand change at once, cached principal or not.
    this.liveToken = new PreparedQuery(k, ['tokenId', 'at'], (p) =>
      k
        .selectFrom('api_tokens as t')
        .leftJoin('brands as tb', (join) => join.onRef('tb.id', '=', 't.brand_id').onRef('tb.account_id', '=', 't.account_id'))
        // `is_default = 1` as a literal, never a bound parameter: it matches the partial index
        // brands_one_default_idx, and SQLite re-prepares a statement whose parameter it compared with a
        // partial index's condition whenever that parameter is bound again (on every search: 0.6 M
        // more instructions a search; docs/decisions.md, "A literal where a partial index's condition
        // is compared").
        .leftJoin('brands as db', (join) => join.onRef('db.account_id', '=', 't.account_id').on('db.is_default', '=', sql.lit(1)))
        .select(['t.id as id', 'tb.id as tokenBrandId', 'tb.report_base_url as tokenBrandBaseUrl', 'db.report_base_url as defaultBrandBaseUrl'])
        .where('t.id', '=', p.tokenId)
        .where('t.revoked_at', 'is', null)
        .where((eb) => eb.or([eb('t.expires_at', 'is', null), eb('t.expires_at', '>', p.at)])),
    );
    // The same choice as the token lookup's (tokens-repository.ts): the newest active one started by `at`.
    this.subscriptionInForce = new PreparedQuery(k, ['accountId', 'at'], (p) =>
      k
        .selectFrom('subscriptions as s')
        .innerJoin('plans as p', 'p.code', 's.plan_code')
        .select(['s.id as id', 's.started_at as startedAt', 'p.monthly_quota as monthlyQuota', 'p.rate_per_second as ratePerSecond'])
        .where('s.account_id', '=', p.accountId)
        .where(subscriptionInForce('s', p.at))
        .orderBy('s.started_at', 'desc')
        .orderBy('s.id', 'desc')
        // A literal, not a bound parameter: SQLite ran this probe in 38 µs with `limit ?` and in
        // 7 µs with `limit 1` (the same plan either way; docs/decisions.md, "The search path's SQLite writes").
        .limit(sql.lit(1)),
    );
  }

  /**
   * The re-check as steps of a unit of work (prepared-query.ts): whether the principal still
   * holds, and the report address its token's brand gives now.
   */
  *steps(principal: TokenPrincipal, at: string): Generator<Step, { holds: boolean; reportBaseUrl: string | null }, unknown[]> {
    const [token] = yield { query: this.liveToken, params: { tokenId: principal.tokenId, at } };
    if (token === undefined) return { holds: false, reportBaseUrl: null };
    const [subscription] = yield { query: this.subscriptionInForce, params: { accountId: principal.accountId, at } };
    return { holds: principalHolds(principal, true, subscription as SubscriptionInForceRow | undefined), reportBaseUrl: reportBaseUrlOf(token as LiveTokenRow) };
  }

  /** Runs the re-check in the given transaction (or on the database). */
  async holds(db: Kysely<Database>, principal: TokenPrincipal, at: string): Promise<boolean> {
    return (await runSteps(db, this.steps(principal, at))).holds;
  }
}

/** True when the token is live and the subscription in force is the one the principal named, on the same figures. */
export function principalHolds(principal: TokenPrincipal, tokenLive: boolean, current: SubscriptionInForceRow | undefined): boolean {
  return tokenLive && sameSubscription(principal.subscription, current ?? null);
}
