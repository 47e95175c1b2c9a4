import { isDatabaseBusy, type Db } from '../../database.ts';
import { SearchUnit, type CommitResult, type SearchCommit, type SearchCommitStores, type SearchToCommit } from '../../search-commit.ts';
import { GroupCommit } from './commits.ts';
import { runStepsDirect } from './direct-statements.ts';

/** At most this many searches in one transaction (GroupCommitOptions.maxBatch: below 64 savepoints that write). */
const MAX_BATCH = 32;
/**
 * Transactions in flight at once. The server's pool holds 10 connections, which the search's reads
 * (the lots) and every other request share; 4 leaves them room.
 */
const MAX_IN_FLIGHT = 4;

export interface PostgresSearchCommitOptions {
  maxBatch?: number;
  maxInFlight?: number;
}

/**
 * PostgreSQL: group commit. The searches that arrive while transactions are in flight commit
 * together in the next one, each in a savepoint of its own (commits.ts), so a COMMIT's WAL flush
 * counts many searches. The usage counter's row lock still orders the searches of one account
 * across instances: inside a batch they run account by account in one order, so that batches of
 * different instances that count for the same accounts never wait on each other in a circle.
 */
export class PostgresSearchCommit implements SearchCommit {
  private readonly committer: GroupCommit<SearchToCommit, CommitResult>;

  constructor(db: Db, stores: SearchCommitStores, options: PostgresSearchCommitOptions = {}) {
    if (db.postgres === null) throw new Error('PostgresSearchCommit needs a PostgreSQL database');
    const unit = new SearchUnit(db, stores);
    this.committer = new GroupCommit(db.postgres, (client, input) => runStepsDirect(client, unit.steps(input)), {
      maxBatch: options.maxBatch ?? MAX_BATCH,
      maxInFlight: options.maxInFlight ?? MAX_IN_FLIGHT,
      lockKey: (input) => input.accountId,
      compare: lockOrder,
      // Two requests with the same new Idempotency-Key raced and the other one committed first; run
      // again, and this time the key is found and the first result replayed.
      retry: (input, error) => input.idempotencyKey !== null && db.isUniqueViolation(error),
      contended: isDatabaseBusy,
    });
  }

  commit(input: SearchToCommit): Promise<CommitResult> {
    return this.committer.commit(input);
  }
}

/**
 * The order of the row locks a batch takes: the account's usage counter (per billing period), then
 * its Idempotency-Keys. Counted searches come before a sandbox token's (which lock no counter), and
 * keys in their order, so that two batches racing on the same keys take them alike.
 */
function lockOrder(a: SearchToCommit, b: SearchToCommit): number {
  return (
    compareText(a.accountId, b.accountId) ||
    compareText(a.periodStart, b.periodStart) ||
    Number(a.sandbox ?? false) - Number(b.sandbox ?? false) ||
    compareText(a.idempotencyKey ?? '', b.idempotencyKey ?? '')
  );
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
