import type { Db } from '../database.ts';
import type { AccountRow, SubscriptionRow } from '../schema.ts';
import { normaliseEmail, type Account, type BuyerDetails } from '../../domain/account.ts';
import { isReportLanguage, type ReportLanguage } from '../../domain/report-language.ts';
import { newId } from '../../domain/ids.ts';
import type { BillingCycle } from '../../domain/principal.ts';
import type { Subscription } from '../../domain/subscription.ts';
import { subscriptionInForce, subscriptionNotEnded } from '../subscription-in-force.ts';

export function toAccount(row: AccountRow): Account {
  // A code no longer offered reads as none, rather than failing every page of the account.
  const language = isReportLanguage(row.default_language) ? row.default_language : null;
  return { id: row.id, email: row.email, createdAt: row.created_at, defaultLanguage: language };
}

export function toSubscription(row: SubscriptionRow): Subscription {
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

  /** `termsAcceptedAt`: when the customer accepted the terms at sign-up (null for accounts the operator makes). */
  async create(email: string, now = new Date(), termsAcceptedAt: Date | null = null): Promise<Account> {
    const row: AccountRow = {
      id: newId('acct'),
      email: normaliseEmail(email),
      created_at: now.toISOString(),
      company: null,
      billing_address: null,
      tax_id: null,
      terms_accepted_at: termsAcceptedAt ? termsAcceptedAt.toISOString() : null,
      deleted_at: null,
      deleted_email: null,
      default_language: null,
    };
    await this.db.kysely.insertInto('accounts').values(row).execute();
    return toAccount(row);
  }

  /** When the account's owner accepted the terms, if they did (accounts made by the operator did not). */
  async termsAcceptedAt(id: string): Promise<string | null> {
    const row = await this.db.kysely.selectFrom('accounts').select('terms_accepted_at').where('id', '=', id).executeTakeFirst();
    return row?.terms_accepted_at ?? null;
  }

  async buyerDetails(id: string): Promise<BuyerDetails> {
    const row = await this.db.kysely.selectFrom('accounts').select(['company', 'billing_address', 'tax_id']).where('id', '=', id).executeTakeFirst();
    return { company: row?.company ?? null, address: row?.billing_address ?? null, taxId: row?.tax_id ?? null };
  }

  async setBuyerDetails(id: string, details: BuyerDetails): Promise<void> {
    await this.db.kysely
      .updateTable('accounts')
      .set({ company: details.company, billing_address: details.address, tax_id: details.taxId })
      .where('id', '=', id)
      .execute();
  }

  /** A new address for the account; throws the database's unique violation when another account has it. */
  async changeEmail(id: string, email: string): Promise<void> {
    await this.db.kysely.updateTable('accounts').set({ email: normaliseEmail(email) }).where('id', '=', id).where('deleted_at', 'is', null).execute();
  }

  /**
   * Marks the account deleted. The row stays (the ledger refers to it) with its address moved to
   * `deleted_email`; `email` becomes a placeholder no one can log in with or sign up as, so that the
   * address is free for a new account. False when it was deleted already.
   */
  async markDeleted(id: string, now = new Date()): Promise<boolean> {
    const result = await this.db.kysely
      .updateTable('accounts')
      .set((eb) => ({ deleted_at: now.toISOString(), deleted_email: eb.ref('email'), email: `deleted+${id}@deleted.invalid` }))
      .where('id', '=', id)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async findByEmail(email: string): Promise<Account | undefined> {
    const row = await this.db.kysely
      .selectFrom('accounts')
      .selectAll()
      .where('email', '=', normaliseEmail(email))
      .executeTakeFirst();
    return row && toAccount(row);
  }

  /** A live account: a deleted one is not found. */
  async findById(id: string): Promise<Account | undefined> {
    const row = await this.db.kysely.selectFrom('accounts').selectAll().where('id', '=', id).where('deleted_at', 'is', null).executeTakeFirst();
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
      .where(subscriptionInForce('subscriptions', at))
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
      .where(subscriptionNotEnded('subscriptions', at))
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
