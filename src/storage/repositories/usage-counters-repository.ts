import type { Kysely } from 'kysely';
import { PreparedQuery } from '../prepared-query.ts';
import type { Db } from '../database.ts';
import type { Database } from '../schema.ts';

/** One account's counter in one billing period, and the quota it may not pass. */
export type CounterKey = {
  accountId: string;
  /** ISO start of the billing period. */
  periodStart: string;
  quota: number;
};

/** Searches counted per account and billing period: the monthly quota's one source of truth. */
export class UsageCountersRepository {
  /** Checks and counts one search (the search commit runs it, on either driver): a row while the quota has room. */
  readonly count: PreparedQuery<CounterKey, { used: number }>;
  readonly selectUsed: PreparedQuery<{ accountId: string; periodStart: string }, { used: number }>;

  constructor(private readonly db: Db) {
    const k = db.kysely;
    // One statement checks and counts: the conditional upsert only increments while used < quota,
    // and on PostgreSQL the row lock it takes serialises concurrent searches of one account.
    this.count = new PreparedQuery(k, ['accountId', 'periodStart', 'quota'], (p) =>
      k
        .insertInto('usage_counters')
        .values({ account_id: p.accountId, period_start: p.periodStart, used: 1 })
        .onConflict((oc) =>
          oc
            .columns(['account_id', 'period_start'])
            .doUpdateSet((eb) => ({ used: eb('usage_counters.used', '+', 1) }))
            .where('usage_counters.used', '<', p.quota),
        )
        .returning('used'),
    );
    this.selectUsed = new PreparedQuery(k, ['accountId', 'periodStart'], (p) =>
      k.selectFrom('usage_counters').select('used').where('account_id', '=', p.accountId).where('period_start', '=', p.periodStart),
    );
  }

  /** Searches counted in the billing period that starts at periodStart. */
  async usedInPeriod(accountId: string, periodStart: string, db: Kysely<Database> = this.db.kysely): Promise<number> {
    const [row] = await this.selectUsed.execute(db, { accountId, periodStart });
    return row ? Number(row.used) : 0;
  }
}
