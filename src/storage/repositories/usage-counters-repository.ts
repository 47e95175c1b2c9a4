import type { Kysely } from 'kysely';
import type { PreparedQuery } from '../prepared-query.ts';
import type { CounterKey, LedgerStatements } from '../ledger-statements.ts';
import type { Db } from '../database.ts';
import type { Database } from '../schema.ts';

/** Searches counted per account and billing period: the monthly quota's one source of truth. */
export class UsageCountersRepository {
  /** Checks and counts one search (the search commit runs it, on either driver): a row while the quota has room. */
  readonly count: PreparedQuery<CounterKey, { used: number }>;
  readonly selectUsed: PreparedQuery<{ accountId: string; periodStart: string }, { used: number }>;

  constructor(
    private readonly db: Db,
    ledger: LedgerStatements,
  ) {
    this.count = ledger.count;
    this.selectUsed = ledger.selectUsed;
  }

  /** Searches counted in the billing period that starts at periodStart. */
  async usedInPeriod(accountId: string, periodStart: string, db: Kysely<Database> = this.db.kysely): Promise<number> {
    const [row] = await this.selectUsed.execute(db, { accountId, periodStart });
    return row ? Number(row.used) : 0;
  }
}
