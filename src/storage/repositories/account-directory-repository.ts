import { sql, type ExpressionBuilder } from 'kysely';
import type { Db } from '../database.ts';
import type { AccountRow, Database } from '../schema.ts';
import type { AccountListFilter, AccountListing } from '../../domain/operations.ts';
import type { Subscription } from '../../domain/subscription.ts';
import { toAccount, toSubscription } from './accounts-repository.ts';

/** LIKE's wildcards in the operator's text match themselves (the pattern's escape is `\`). */
function likeContaining(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

type Eb = ExpressionBuilder<Database, 'accounts'>;

/** A subscription of the account in force at `at`, optionally on one plan. */
function inForce(eb: Eb, at: string, plan?: string) {
  let query = eb
    .selectFrom('subscriptions as s')
    .select('s.id')
    .whereRef('s.account_id', '=', 'accounts.id')
    .where('s.status', '=', 'active')
    .where('s.started_at', '<=', at)
    .where((inner) => inner.or([inner('s.ends_at', 'is', null), inner('s.ends_at', '>', at)]));
  if (plan !== undefined) query = query.where('s.plan_code', '=', plan);
  return eb.exists(query);
}

function anySubscription(eb: Eb) {
  return eb.exists(eb.selectFrom('subscriptions as s').select('s.id').whereRef('s.account_id', '=', 'accounts.id'));
}

/**
 * The operators' view of every account: listing and filtering by email, plan and status, with
 * the subscription in force. One statement for the page and one for its subscriptions.
 */
export class AccountDirectoryRepository {
  constructor(private readonly db: Db) {}

  /** Newest accounts first (created_at, then id). */
  async page(filter: AccountListFilter, now = new Date()): Promise<AccountListing[]> {
    const at = now.toISOString();
    let query = this.db.kysely.selectFrom('accounts').selectAll();
    if (filter.email !== undefined && filter.email !== '') {
      const pattern = likeContaining(filter.email.trim().toLowerCase());
      // A deleted account is found by the address it had.
      query = query.where((eb) => eb.or([sql<boolean>`${eb.ref('email')} like ${pattern} escape '\\'`, sql<boolean>`${eb.ref('deleted_email')} like ${pattern} escape '\\'`]));
    }
    if (filter.plan !== undefined) query = query.where((eb) => inForce(eb, at, filter.plan));
    switch (filter.status) {
      case 'deleted':
        query = query.where('deleted_at', 'is not', null);
        break;
      case 'active':
        query = query.where('deleted_at', 'is', null).where((eb) => inForce(eb, at));
        break;
      case 'lapsed':
        query = query.where('deleted_at', 'is', null).where((eb) => eb.and([eb.not(inForce(eb, at)), anySubscription(eb)]));
        break;
      case 'none':
        query = query.where('deleted_at', 'is', null).where((eb) => eb.not(anySubscription(eb)));
        break;
      case undefined:
        break;
    }
    if (filter.before) {
      const { createdAt, id } = filter.before;
      query = query.where((eb) => eb.or([eb('created_at', '<', createdAt), eb.and([eb('created_at', '=', createdAt), eb('id', '<', id)])]));
    }
    const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(filter.limit).execute();
    return this.withSubscriptions(rows, at);
  }

  /** One account by id, deleted or not. */
  async find(id: string, now = new Date()): Promise<AccountListing | undefined> {
    const rows = await this.db.kysely.selectFrom('accounts').selectAll().where('id', '=', id).execute();
    const [listing] = await this.withSubscriptions(rows, now.toISOString());
    return listing;
  }

  /** The accounts' subscriptions read in one statement: the one in force (as findActive chooses it), and whether there was ever one. */
  private async withSubscriptions(rows: AccountRow[], at: string): Promise<AccountListing[]> {
    if (rows.length === 0) return [];
    const ids = rows.map((row) => row.id);
    const subscriptions = await this.db.kysely
      .selectFrom('subscriptions')
      .selectAll()
      .where('account_id', 'in', ids)
      .orderBy('started_at', 'desc')
      .orderBy('id', 'desc')
      .execute();
    const current = new Map<string, Subscription>();
    const ever = new Set<string>();
    for (const row of subscriptions) {
      ever.add(row.account_id);
      const live = row.status === 'active' && row.started_at <= at && (row.ends_at === null || row.ends_at > at);
      if (live && !current.has(row.account_id)) current.set(row.account_id, toSubscription(row));
    }
    return rows.map((row) => ({
      account: toAccount(row),
      deletedEmail: row.deleted_email,
      deletedAt: row.deleted_at,
      inForce: current.get(row.id) ?? null,
      everSubscribed: ever.has(row.id),
    }));
  }
}
