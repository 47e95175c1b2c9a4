import { loadConfig, type Config } from '../config.ts';
import { migrateToLatest, openDatabase, type Db } from '../storage/database.ts';
import { createRepositories, type Repositories } from '../storage/repositories/index.ts';

export interface CommandContext {
  config: Config;
  db: Db;
  repos: Repositories;
}

/**
 * Opens the configured database for one command, brings its schema up to date first (so that a
 * command works on a fresh DATA_DIR), and always closes it: an open pg pool would keep the
 * process alive after the command is done.
 */
export async function withDatabase<T>(run: (context: CommandContext) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const db = await openDatabase(config.database, { maxConnections: 2 });
  try {
    await migrateToLatest(db);
    return await run({ config, db, repos: createRepositories(db) });
  } finally {
    await db.close();
  }
}

/**
 * Runs `work` in one transaction with repositories bound to it: a command that writes several
 * rows (an account and its subscription) leaves all of them or none.
 */
export async function inTransaction<T>(db: Db, work: (repos: Repositories) => Promise<T>): Promise<T> {
  return db.kysely.transaction().execute((trx) => work(createRepositories({ ...db, kysely: trx })));
}
