import type { PreparedQuery } from '../prepared-query.ts';
import { IDEMPOTENCY_WINDOW_MS, type EarlierKeyRow, type LedgerStatements, type NewIdempotencyKey } from '../ledger-statements.ts';
import type { Db } from '../database.ts';

/**
 * The Idempotency-Keys of the last 24 hours, per account, each naming the search it answered. The
 * search commit runs the statements below, on either driver.
 */
export class IdempotencyKeysRepository {
  readonly insertKey: PreparedQuery<NewIdempotencyKey, unknown>;
  readonly earlierKey: PreparedQuery<{ accountId: string; key: string }, EarlierKeyRow>;
  readonly deleteKey: PreparedQuery<{ accountId: string; key: string }, unknown>;

  constructor(
    private readonly db: Db,
    ledger: LedgerStatements,
  ) {
    this.insertKey = ledger.insertKey;
    this.earlierKey = ledger.earlierKey;
    this.deleteKey = ledger.deleteKey;
  }

  /** Keys live 24 hours; older ones are only dead weight. */
  async deleteExpired(now = new Date()): Promise<number> {
    const cutoff = new Date(now.getTime() - IDEMPOTENCY_WINDOW_MS).toISOString();
    const result = await this.db.kysely.deleteFrom('idempotency_keys').where('created_at', '<=', cutoff).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
