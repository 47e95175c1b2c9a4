import type { Db } from '../../database.ts';
import { SearchUnit, type CommitResult, type SearchCommit, type SearchCommitStores, type SearchToCommit } from '../../search-commit.ts';
import { TransactionPerCommit } from './commits.ts';

/**
 * PostgreSQL: each search in a transaction of its own, on many connections side by side; the
 * usage counter's row lock orders the searches of one account across instances.
 */
export class PostgresSearchCommit implements SearchCommit {
  private readonly committer: TransactionPerCommit<any, SearchToCommit, CommitResult>;

  constructor(db: Db, stores: SearchCommitStores) {
    const unit = new SearchUnit(db, stores);
    // Two requests with the same new Idempotency-Key raced and the other one committed first; run
    // again, and this time the key is found and the first result replayed.
    this.committer = new TransactionPerCommit(db.kysely, db.isUniqueViolation, (trx, input) => unit.run(trx, input), (input) => input.idempotencyKey !== null);
  }

  commit(input: SearchToCommit): Promise<CommitResult> {
    return this.committer.commit(input);
  }
}
