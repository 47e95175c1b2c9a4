import type { Db } from '../db/database.ts';
import type { ApiTokenRow, SubscriptionRow } from '../db/schema.ts';
import { generateApiToken, hashApiToken } from '../domain/api-token.ts';
import { newId } from '../domain/ids.ts';

/** What one authenticated request needs to know, read in a single query. */
export interface TokenPrincipal {
  tokenId: string;
  accountId: string;
  lastUsedAt: string | null;
  subscription: {
    id: string;
    startedAt: string;
    billing: SubscriptionRow['billing'];
    planCode: string;
    planName: string;
    monthlyQuota: number;
    ratePerSecond: number;
  } | null;
}

export class TokensRepository {
  constructor(private readonly db: Db) {}

  /** Creates a token and returns its secret, which is not stored and cannot be shown again. */
  async create(accountId: string, name: string, now = new Date()): Promise<{ row: ApiTokenRow; token: string }> {
    const secret = generateApiToken();
    const row: ApiTokenRow = {
      id: newId('tok'),
      account_id: accountId,
      name,
      token_hash: secret.hash,
      display_prefix: secret.displayPrefix,
      created_at: now.toISOString(),
      last_used_at: null,
      revoked_at: null,
    };
    await this.db.kysely.insertInto('api_tokens').values(row).execute();
    return { row, token: secret.token };
  }

  /** Revokes by the secret itself. Returns false when no live token has that value. */
  async revokeByToken(token: string, now = new Date()): Promise<boolean> {
    const result = await this.db.kysely
      .updateTable('api_tokens')
      .set({ revoked_at: now.toISOString() })
      .where('token_hash', '=', hashApiToken(token))
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async listForAccount(accountId: string): Promise<ApiTokenRow[]> {
    return this.db.kysely
      .selectFrom('api_tokens')
      .selectAll()
      .where('account_id', '=', accountId)
      .orderBy('created_at', 'desc')
      .execute();
  }

  /**
   * The live token with this secret, its account and the subscription in force at `now` with its
   * plan: one index probe on token_hash and one on the account's subscriptions. Revocation takes
   * effect on the next request because nothing here is cached.
   */
  async authenticate(token: string, now = new Date()): Promise<TokenPrincipal | null> {
    const at = now.toISOString();
    const row = await this.db.kysely
      .selectFrom('api_tokens as t')
      .leftJoin('subscriptions as s', (join) =>
        join
          .onRef('s.account_id', '=', 't.account_id')
          .on('s.status', '=', 'active')
          .on('s.started_at', '<=', at)
          .on((eb) => eb.or([eb('s.ends_at', 'is', null), eb('s.ends_at', '>', at)])),
      )
      .leftJoin('plans as p', 'p.code', 's.plan_code')
      .select([
        't.id as tokenId',
        't.account_id as accountId',
        't.last_used_at as lastUsedAt',
        's.id as subscriptionId',
        's.started_at as startedAt',
        's.billing as billing',
        'p.code as planCode',
        'p.name as planName',
        'p.monthly_quota as monthlyQuota',
        'p.rate_per_second as ratePerSecond',
      ])
      .where('t.token_hash', '=', hashApiToken(token))
      .where('t.revoked_at', 'is', null)
      .orderBy('s.started_at', 'desc')
      .limit(1)
      .executeTakeFirst();
    if (!row) return null;
    const hasSubscription =
      row.subscriptionId !== null && row.startedAt !== null && row.billing !== null && row.planCode !== null &&
      row.planName !== null && row.monthlyQuota !== null && row.ratePerSecond !== null;
    return {
      tokenId: row.tokenId,
      accountId: row.accountId,
      lastUsedAt: row.lastUsedAt,
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

  async touch(tokenId: string, now = new Date()): Promise<void> {
    await this.db.kysely.updateTable('api_tokens').set({ last_used_at: now.toISOString() }).where('id', '=', tokenId).execute();
  }
}
