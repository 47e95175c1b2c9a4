import type { Kysely, Transaction } from 'kysely';

/**
 * PostgreSQL: each unit of work in a transaction of its own. Many connections commit side by
 * side, and row locks (not a single writer) order the units that touch the same rows. A unit that
 * failed on a unique violation, because a concurrent one committed the same row first, runs once
 * more when `retryOnUniqueViolation` says that a second run answers it.
 */
export class TransactionPerCommit<DB, I, R> {
  constructor(
    private readonly kysely: Kysely<DB>,
    private readonly isUniqueViolation: (error: unknown) => boolean,
    private readonly work: (trx: Transaction<DB>, input: I) => Promise<R>,
    private readonly retryOnUniqueViolation: (input: I) => boolean,
  ) {}

  async commit(input: I): Promise<R> {
    try {
      return await this.kysely.transaction().execute((trx) => this.work(trx, input));
    } catch (error) {
      if (this.retryOnUniqueViolation(input) && this.isUniqueViolation(error)) {
        return this.kysely.transaction().execute((trx) => this.work(trx, input));
      }
      throw error;
    }
  }
}
