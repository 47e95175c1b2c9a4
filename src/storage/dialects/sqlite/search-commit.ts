import type { Db } from '../../database.ts';
import { SearchUnit, type CommitResult, type SearchCommit, type SearchCommitStores, type SearchToCommit } from '../../search-commit.ts';
import { GroupCommit } from './commits.ts';

/**
 * SQLite: one writer, so the searches that arrive while a transaction runs commit together in
 * the next one, each in a savepoint of its own (group commit).
 */
export class SqliteSearchCommit implements SearchCommit {
  private readonly committer: GroupCommit<any, SearchToCommit, CommitResult>;

  constructor(db: Db, stores: SearchCommitStores) {
    const unit = new SearchUnit(db, stores);
    this.committer = new GroupCommit(db.kysely, (trx, input) => unit.run(trx, input));
  }

  commit(input: SearchToCommit): Promise<CommitResult> {
    return this.committer.commit(input);
  }
}
