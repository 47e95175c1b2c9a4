import type { Db } from '../database.ts';
import type { AccountRow, SubscriptionRow } from '../schema.ts';
import { normaliseEmail, type Account } from '../../domain/account.ts';
import { isReportLanguage, type ReportLanguage } from '../../domain/report-language.ts';
import { newId } from '../../domain/ids.ts';
import type { BillingCycle } from '../../domain/principal.ts';
import type { Subscription } from '../../domain/subscription.ts';

function toAccount(row: AccountRow): Account {
  // A code no longer offered reads as none, rather than failing every page of the account.
  const language = isReportLanguage(row.default_language) ? row.default_language : null;
  return { id: row.id, email: row.email, createdAt: row.created_at, defaultLanguage: language };
}

function toSubscription(row: SubscriptionRow): Subscription {
  return {
    id: row.id,
    accountId: row.account_id,
    planCode: row.plan_code,
    billing: row.billing,
    status: row.status,
    startedAt: row.started_at,
    endsAt: row.ends_at,
    createdAt: row.created_at,
  };
}

export class AccountsRepository {
  constructor(private readonly db: Db) {}

  async create(email: string, now = new Date()): Promise<Account> {
    const row: AccountRow = { id: newId('acct'), email: normaliseEmail(email), created_at: now.toISOString(), default_language: null };
    await this.db.kysely.insertInto('accounts').values(row).execute();
    return toAccount(row);
  }

  async findByEmail(email: string): Promise<Account | undefined> {
    const row = await this.db.kysely
      .selectFrom('accounts')
      .selectAll()
      .where('email', '=', normaliseEmail(email))
      .executeTakeFirst();
    return row && toAccount(row);
  }

  async findById(id: string): Promise<Account | undefined> {
    const row = await this.db.kysely.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toAccount(row);
  }

  async setDefaultLanguage(id: string, language: ReportLanguage | null): Promise<void> {
    await this.db.kysely.updateTable('accounts').set({ default_language: language }).where('id', '=', id).execute();
  }
}

export interface NewSubscription {
  accountId: string;
  planCode: string;
  billing: BillingCycle;
  startedAt: Date;
  endsAt?: Date | null;
}

export class SubscriptionsRepository {
  constructor(private readonly db: Db) {}

  async create(input: NewSubscription, now = new Date()): Promise<Subscription> {
    const row: SubscriptionRow = {
      id: newId('sub'),
      account_id: input.accountId,
      plan_code: input.planCode,
      billing: input.billing,
      status: 'active',
      started_at: input.startedAt.toISOString(),
      ends_at: input.endsAt ? input.endsAt.toISOString() : null,
      created_at: now.toISOString(),
    };
    await this.db.kysely.insertInto('subscriptions').values(row).execute();
    return toSubscription(row);
  }

  /** The subscription in force at `now`: active, started, not ended; the latest if several. */
  async findActive(accountId: string, now = new Date()): Promise<Subscription | undefined> {
    const at = now.toISOString();
    const row = await this.db.kysely
      .selectFrom('subscriptions')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('status', '=', 'active')
      .where('started_at', '<=', at)
      .where((eb) => eb.or([eb('ends_at', 'is', null), eb('ends_at', '>', at)]))
      .orderBy('started_at', 'desc')
      .executeTakeFirst();
    return row && toSubscription(row);
  }

  /**
   * Ends every subscription of the account that is in force now or scheduled to start later, so
   * that nothing revives after a cancel. Returns how many were ended.
   */
  async cancelActive(accountId: string, now = new Date()): Promise<number> {
    const at = now.toISOString();
    const result = await this.db.kysely
      .updateTable('subscriptions')
      .set({ status: 'cancelled', ends_at: at })
      .where('account_id', '=', accountId)
      .where('status', '=', 'active')
      .where((eb) => eb.or([eb('ends_at', 'is', null), eb('ends_at', '>', at)]))
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  async findById(id: string): Promise<Subscription | undefined> {
    const row = await this.db.kysely.selectFrom('subscriptions').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toSubscription(row);
  }

  /** The account's most recent subscription, in force or not: to tell "never subscribed" from "ended". */
  async findLatest(accountId: string): Promise<Subscription | undefined> {
    const row = await this.db.kysely
      .selectFrom('subscriptions')
      .selectAll()
      .where('account_id', '=', accountId)
      .orderBy('started_at', 'desc')
      .orderBy('created_at', 'desc')
      .executeTakeFirst();
    return row && toSubscription(row);
  }

  /**
   * Moves a subscription to another plan or billing period. started_at (the billing-period anchor)
   * is kept, so the current period and its count carry over and the new quota applies to it.
   */
  async changePlan(id: string, planCode: string, billing?: BillingCycle): Promise<void> {
    await this.db.kysely
      .updateTable('subscriptions')
      .set(billing ? { plan_code: planCode, billing } : { plan_code: planCode })
      .where('id', '=', id)
      .execute();
  }

  /** Sets the paid-through date (renewal, cancel at period end), or null for "until cancelled". */
  async setEndsAt(id: string, endsAt: Date | null): Promise<void> {
    await this.db.kysely
      .updateTable('subscriptions')
      .set({ ends_at: endsAt ? endsAt.toISOString() : null })
      .where('id', '=', id)
      .execute();
  }

  /** Ends one subscription at `at` (the payment provider ended it). False when it was already over. */
  async end(id: string, at: Date): Promise<boolean> {
    const iso = at.toISOString();
    const result = await this.db.kysely
      .updateTable('subscriptions')
      .set({ status: 'cancelled', ends_at: iso })
      .where('id', '=', id)
      .where('status', '=', 'active')
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }
}
