import type { Db } from './database.ts';
import { createRepositories, type Repositories } from './repositories/index.ts';

/** Runs `work` in one transaction with repositories bound to it: all of its writes or none. */
export function inTransaction<T>(db: Db, work: (repos: Repositories) => Promise<T>): Promise<T> {
  return db.kysely.transaction().execute((trx) => work(createRepositories({ ...db, kysely: trx })));
}
