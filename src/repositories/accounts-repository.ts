import type { Db } from '../db/database.ts';
import type { AccountRow, SubscriptionRow } from '../db/schema.ts';
import { newId } from '../domain/ids.ts';

export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

export class AccountsRepository {
  constructor(private readonly db: Db) {}

  async create(email: string, now = new Date()): Promise<AccountRow> {
    const row: AccountRow = { id: newId('acct'), email: normaliseEmail(email), created_at: now.toISOString() };
    await this.db.kysely.insertInto('accounts').values(row).execute();
    return row;
  }

  async findByEmail(email: string): Promise<AccountRow | undefined> {
    return this.db.kysely
      .selectFrom('accounts')
      .selectAll()
      .where('email', '=', normaliseEmail(email))
      .executeTakeFirst();
  }

  async findById(id: string): Promise<AccountRow | undefined> {
    return this.db.kysely.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
  }
}

export interface NewSubscription {
  accountId: string;
  planCode: string;
  billing: SubscriptionRow['billing'];
  startedAt: Date;
  endsAt?: Date | null;
}

export class SubscriptionsRepository {
  constructor(private readonly db: Db) {}

  async create(input: NewSubscription, now = new Date()): Promise<SubscriptionRow> {
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
    return row;
  }

  /** The subscription in force at `now`: active, started, not ended; the latest if several. */
  async findActive(accountId: string, now = new Date()): Promise<SubscriptionRow | undefined> {
    const at = now.toISOString();
    return this.db.kysely
      .selectFrom('subscriptions')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('status', '=', 'active')
      .where('started_at', '<=', at)
      .where((eb) => eb.or([eb('ends_at', 'is', null), eb('ends_at', '>', at)]))
      .orderBy('started_at', 'desc')
      .executeTakeFirst();
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
}
