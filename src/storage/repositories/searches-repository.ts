import { sql } from 'kysely';
import type { PreparedQuery } from '../prepared-query.ts';
import type { LedgerStatements } from '../ledger-statements.ts';
import type { Db } from '../database.ts';
import type { SearchRow } from '../schema.ts';
import type { AccountSearch, SearchKind } from '../../domain/search.ts';

/** The ledger of counted searches: one record per search, found or not, and the history pages read from it. */
export class SearchesRepository {
  /** Run by the search commit, on either driver. */
  readonly insertSearch: PreparedQuery<Record<keyof SearchRow, unknown>, unknown>;

  constructor(
    private readonly db: Db,
    ledger: LedgerStatements,
  ) {
    this.insertSearch = ledger.insertSearch;
  }

  /** Counted searches only: a sandbox token's are recorded but never counted. */
  async countForAccount(accountId: string): Promise<number> {
    const row = await this.db.kysely
      .selectFrom('searches')
      .select((eb) => eb.fn.countAll<string | number>().as('n'))
      .where('account_id', '=', accountId)
      .where('sandbox', '=', 0)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async listForAccount(accountId: string, limit = 100): Promise<SearchRow[]> {
    return this.db.kysely
      .selectFrom('searches')
      .selectAll()
      .where('account_id', '=', accountId)
      .orderBy('created_at', 'desc')
      .limit(limit)
      .execute();
  }

  /**
   * Counted searches per UTC day in [from, to), for the usage chart (a sandbox token's searches
   * use none of the quota and are left out). Days without searches are absent. A range scan of
   * searches_account_idx; substr of the ISO text is the UTC day on both dialects.
   */
  async dailyCounts(accountId: string, from: string, to: string): Promise<{ day: string; count: number }[]> {
    const day = sql<string>`substr(created_at, 1, 10)`;
    const rows = await this.db.kysely
      .selectFrom('searches')
      .select([day.as('day'), (eb) => eb.fn.countAll<string | number>().as('n')])
      .where('account_id', '=', accountId)
      .where('created_at', '>=', from)
      .where('created_at', '<', to)
      .where('sandbox', '=', 0)
      .groupBy(day)
      .orderBy(day)
      .execute();
    return rows.map((row) => ({ day: row.day, count: Number(row.n) }));
  }

  /**
   * Counted calls per kind in [from, to) (a search by VIN, a lookup by lot, a catalogue search, a
   * market value, a lot's history), sandbox ones left out; kinds without calls are absent. A range
   * scan of searches_account_idx.
   */
  async countsByKind(accountId: string, from: string, to: string): Promise<{ kind: SearchKind; count: number }[]> {
    const rows = await this.db.kysely
      .selectFrom('searches')
      .select(['kind', (eb) => eb.fn.countAll<string | number>().as('n')])
      .where('account_id', '=', accountId)
      .where('created_at', '>=', from)
      .where('created_at', '<', to)
      .where('sandbox', '=', 0)
      .groupBy('kind')
      .orderBy('kind')
      .execute();
    return rows.map((row) => ({ kind: row.kind, count: Number(row.n) }));
  }

  /**
   * One page of the account's searches, newest first, with the name of the token used. Keyset
   * paging on (created_at, id): a page stays cheap however far back the customer reads.
   */
  async pageForAccount(
    accountId: string,
    options: { limit: number; before?: { createdAt: string; id: string } },
  ): Promise<{ searches: AccountSearch[]; hasMore: boolean }> {
    let query = this.db.kysely
      .selectFrom('searches as s')
      .leftJoin('api_tokens as t', 't.id', 's.token_id')
      .select(['s.id', 's.vin', 's.created_at', 's.outcome', 's.report_id', 't.name as token_name', 't.display_prefix as token_prefix', 's.sandbox', 's.kind'])
      .where('s.account_id', '=', accountId);
    const before = options.before;
    if (before) {
      query = query.where((eb) =>
        eb.or([eb('s.created_at', '<', before.createdAt), eb.and([eb('s.created_at', '=', before.createdAt), eb('s.id', '<', before.id)])]),
      );
    }
    const rows = await query.orderBy('s.created_at', 'desc').orderBy('s.id', 'desc').limit(options.limit + 1).execute();
    return {
      hasMore: rows.length > options.limit,
      searches: rows.slice(0, options.limit).map((row) => ({
        id: row.id,
        vin: row.vin,
        createdAt: row.created_at,
        outcome: row.outcome,
        kind: row.kind,
        reportId: row.report_id,
        tokenName: row.token_name,
        tokenPrefix: row.token_prefix,
        sandbox: row.sandbox === 1,
      })),
    };
  }
}
