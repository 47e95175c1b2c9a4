import { sql, type Kysely } from 'kysely';
import type { Db } from '../database.ts';
import type { ApiTokenRow, Database } from '../schema.ts';
import { generateApiToken, hashApiToken, type ApiToken, type ApiTokenKind } from '../../domain/api-token.ts';
import { newId } from '../../domain/ids.ts';
import { PreparedQuery } from '../prepared-query.ts';
import { reportBaseUrlOf } from '../principal-recheck.ts';
import { revokeLiveToken } from './revoke-token.ts';
import type { TokenPrincipal } from '../../domain/principal.ts';
import { subscriptionInForce } from '../subscription-in-force.ts';

function toApiToken(row: ApiTokenRow): ApiToken {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    kind: row.sandbox === 1 ? 'test' : 'live',
    displayPrefix: row.display_prefix,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
    revokedAt: row.revoked_at,
    expiresAt: row.expires_at,
  };
}

export class TokensRepository {
  /** Built once: on every search, building the query would cost more than running it. */
  private readonly authenticateQuery;
  private readonly reloadQuery;

  constructor(private readonly db: Db) {
    const k = db.kysely;
    this.authenticateQuery = new PreparedQuery(k, ['hash', 'at'], (p: { hash: string; at: string }) =>
      principalQuery(k, p.at).where('t.token_hash', '=', p.hash),
    );
    this.reloadQuery = new PreparedQuery(k, ['tokenId', 'at'], (p: { tokenId: string; at: string }) =>
      principalQuery(k, p.at).where('t.id', '=', p.tokenId),
    );
  }

  /** Creates a token and returns its secret, which is not stored and cannot be shown again. */
  async create(accountId: string, name: string, now = new Date(), kind: ApiTokenKind = 'live'): Promise<{ row: ApiToken; token: string }> {
    const secret = generateApiToken(kind);
    const row: ApiTokenRow = {
      id: newId('tok'),
      account_id: accountId,
      name,
      token_hash: secret.hash,
      display_prefix: secret.displayPrefix,
      created_at: now.toISOString(),
      last_used_at: null,
      revoked_at: null,
      expires_at: null,
      sandbox: kind === 'test' ? 1 : 0,
      brand_id: null,
    };
    await this.db.kysely.insertInto('api_tokens').values(row).execute();
    return { row: toApiToken(row), token: secret.token };
  }

  /** One token by id, live or not (the operators' revoke by id). */
  async findById(id: string): Promise<ApiToken | undefined> {
    const row = await this.db.kysely.selectFrom('api_tokens').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toApiToken(row);
  }

  /** One token by its secret, live or not: the secret is hashed, never compared or stored as it is. */
  async findBySecret(token: string): Promise<ApiToken | undefined> {
    const row = await this.db.kysely.selectFrom('api_tokens').selectAll().where('token_hash', '=', hashApiToken(token)).executeTakeFirst();
    return row && toApiToken(row);
  }

  /** Revokes by the secret itself. Returns false when no live token has that value. */
  async revokeByToken(token: string, now = new Date()): Promise<boolean> {
    return revokeLiveToken(this.db.kysely, { table: 'api_tokens', column: 'token_hash', value: hashApiToken(token) }, now);
  }

  async listForAccount(accountId: string): Promise<ApiToken[]> {
    const rows = await this.db.kysely
      .selectFrom('api_tokens')
      .selectAll()
      .where('account_id', '=', accountId)
      .orderBy('created_at', 'desc')
      .execute();
    return rows.map(toApiToken);
  }

  /**
   * The live token with this secret, its account and the subscription in force at `now` with its
   * plan: one index probe on token_hash and one on the account's subscriptions. Read afresh on every
   * call; the search path's cache (accounts/principal-cache.ts) is re-checked in each commit.
   */
  authenticate(token: string, now = new Date()): Promise<TokenPrincipal | null> {
    return this.authenticateByHash(hashApiToken(token), now);
  }

  /** The same, by the token's hash (the search path's cache is keyed by it). */
  async authenticateByHash(hash: string, now = new Date()): Promise<TokenPrincipal | null> {
    const [row] = await this.authenticateQuery.execute(this.db.kysely, { hash, at: now.toISOString() });
    return row ? principalFromRow(row) : null;
  }

  /**
   * The same principal read afresh by token id: after a search's commit found that what a cached
   * principal said no longer holds (revoked, plan changed). Null when the token is no longer live.
   */
  async reload(tokenId: string, now = new Date()): Promise<TokenPrincipal | null> {
    const [row] = await this.reloadQuery.execute(this.db.kysely, { tokenId, at: now.toISOString() });
    return row ? principalFromRow(row) : null;
  }

  async touch(tokenId: string, now = new Date()): Promise<void> {
    await this.db.kysely.updateTable('api_tokens').set({ last_used_at: now.toISOString() }).where('id', '=', tokenId).execute();
  }

  /** Revokes one of the account's tokens at once. False when it is not the account's, or already revoked. */
  async revokeForAccount(accountId: string, tokenId: string, now = new Date()): Promise<boolean> {
    return revokeLiveToken(this.db.kysely, { table: 'api_tokens', column: 'id', value: tokenId, accountId }, now);
  }

  /** Revokes every live token of the account (its deletion); rotated ones still in their grace period too. */
  async revokeAllForAccount(accountId: string, now = new Date()): Promise<number> {
    const result = await this.db.kysely
      .updateTable('api_tokens')
      .set({ revoked_at: now.toISOString() })
      .where('account_id', '=', accountId)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  /**
   * Replaces a live token with a new one of the same name. The old one keeps working until
   * `graceEndsAt`, so that deployments can switch over. A token is rotated once: null when it is
   * not the account's, revoked, or already rotated (the conditional update also settles two
   * rotations racing on PostgreSQL: the second finds expires_at set and changes nothing).
   */
  async rotateForAccount(
    accountId: string,
    tokenId: string,
    graceEndsAt: Date,
    now = new Date(),
  ): Promise<{ row: ApiToken; token: string; previous: ApiToken } | null> {
    const at = now.toISOString();
    const expiresAt = graceEndsAt.toISOString();
    return this.db.kysely.transaction().execute(async (trx) => {
      const updated = await trx
        .updateTable('api_tokens')
        .set({ expires_at: expiresAt })
        .where('id', '=', tokenId)
        .where('account_id', '=', accountId)
        .where('revoked_at', 'is', null)
        .where('expires_at', 'is', null)
        .executeTakeFirst();
      if (Number(updated.numUpdatedRows) === 0) return null;
      const previous = await trx.selectFrom('api_tokens').selectAll().where('id', '=', tokenId).executeTakeFirstOrThrow();
      // The successor is of the same kind: rotating a test token never makes a live one.
      const secret = generateApiToken(previous.sandbox === 1 ? 'test' : 'live');
      const row: ApiTokenRow = {
        id: newId('tok'),
        account_id: accountId,
        name: previous.name,
        token_hash: secret.hash,
        display_prefix: secret.displayPrefix,
        created_at: at,
        last_used_at: null,
        revoked_at: null,
        expires_at: null,
        sandbox: previous.sandbox,
        // The successor serves the same site: it keeps the brand.
        brand_id: previous.brand_id,
      };
      await trx.insertInto('api_tokens').values(row).execute();
      return { row: toApiToken(row), token: secret.token, previous: toApiToken(previous) };
    });
  }
}

/** The live token, its subscription in force at `at` with its plan, and its brand's report address. */
function principalQuery(k: Kysely<Database>, at: string) {
  return (
    k
      .selectFrom('api_tokens as t')
      .leftJoin('subscriptions as s', (join) =>
        join
          .onRef('s.account_id', '=', 't.account_id')
          .on(subscriptionInForce('s', at)),
      )
      .leftJoin('plans as p', 'p.code', 's.plan_code')
      // The brand whose report base URL the token's report_url uses: the token's own, else the
      // account's default (at most one), each an index probe.
      .leftJoin('brands as tb', (join) => join.onRef('tb.id', '=', 't.brand_id').onRef('tb.account_id', '=', 't.account_id'))
      // `is_default = 1` as a literal, never a bound parameter: it matches the partial index
      // brands_one_default_idx, and SQLite re-prepares a statement whose parameter it compared with a
      // partial index's condition whenever that parameter is bound again (on every search: 0.6 M
      // more instructions a search; docs/decisions.md, "A literal where a partial index's condition
      // is compared").
      .leftJoin('brands as db', (join) => join.onRef('db.account_id', '=', 't.account_id').on('db.is_default', '=', sql.lit(1)))
      .select([
        't.id as tokenId',
        't.account_id as accountId',
        't.last_used_at as lastUsedAt',
        't.sandbox as sandbox',
        's.id as subscriptionId',
        's.started_at as startedAt',
        's.billing as billing',
        'p.code as planCode',
        'p.name as planName',
        'p.monthly_quota as monthlyQuota',
        'p.rate_per_second as ratePerSecond',
        'tb.id as tokenBrandId',
        'tb.report_base_url as tokenBrandBaseUrl',
        'db.report_base_url as defaultBrandBaseUrl',
      ])
      .where('t.revoked_at', 'is', null)
      // A rotated token works until its grace period ends, checked in the same query.
      .where((eb) => eb.or([eb('t.expires_at', 'is', null), eb('t.expires_at', '>', at)]))
      // The id breaks a tie between two started at the same instant, as the commit's re-check does.
      .orderBy('s.started_at', 'desc')
      .orderBy('s.id', 'desc')
      .limit(1)
  );
}

type PrincipalRow = Awaited<ReturnType<ReturnType<typeof principalQuery>['executeTakeFirstOrThrow']>>;

function principalFromRow(row: PrincipalRow): TokenPrincipal {
  const hasSubscription =
    row.subscriptionId !== null && row.startedAt !== null && row.billing !== null && row.planCode !== null &&
    row.planName !== null && row.monthlyQuota !== null && row.ratePerSecond !== null;
  return {
    tokenId: row.tokenId,
    accountId: row.accountId,
    lastUsedAt: row.lastUsedAt,
    sandbox: row.sandbox === 1,
    reportBaseUrl: reportBaseUrlOf({ id: row.tokenId, ...row }),
    subscription: hasSubscription
      ? {
          id: row.subscriptionId!,
          startedAt: row.startedAt!,
          billing: row.billing!,
          planCode: row.planCode!,
          planName: row.planName!,
          monthlyQuota: row.monthlyQuota!,
          ratePerSecond: row.ratePerSecond!,
        }
      : null,
  };
}
