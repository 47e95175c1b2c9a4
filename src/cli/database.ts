import pino from 'pino';
import { loadConfig, type Config } from '../config.ts';
import type { Container } from '../container.ts';
import { MemoryRateLimiter } from '../limits/rate/memory-rate-limiter.ts';
import { loggerOptions } from '../observability/logger.ts';
import { migrateToLatest, openDatabase, servingProcesses, type Db } from '../storage/database.ts';

export interface CommandContext {
  config: Config;
  db: Db;
  /** The services, built as the server builds them: a command goes through them, not around them. */
  services: Container;
}

/**
 * Opens the configured database for one command, brings its schema up to date first (so that a
 * command works on a fresh DATA_DIR), builds the services over it, and always closes both: an
 * open pg pool would keep the process alive after the command is done.
 */
export async function withDatabase<T>(run: (context: CommandContext) => Promise<T>, options: { migrate?: boolean } = {}): Promise<T> {
  const config = loadConfig();
  const db = await openDatabase(config.database, { maxConnections: 2, lockTimeoutMs: config.databaseLockTimeoutMs });
  // No command searches: an in-process limiter keeps a command from connecting to Redis.
  const rateLimiter = new MemoryRateLimiter();
  try {
    // `doctor` looks at the schema as it is: migrating first would hide migrations that are behind.
    if (options.migrate !== false) await migrateToLatest(db);
    // Log lines go to stderr: stdout carries a command's answer alone (a token, a table).
    const log = pino(loggerOptions(config), pino.destination(2));
    // Loaded here, not at start-up: `--help` and a mistyped command do without the services.
    const { createContainer } = await import('../container.ts');
    const services = createContainer({ config, db, log, rateLimiter });
    try {
      return await run({ config, db, services });
    } finally {
      await services.close();
    }
  } finally {
    await rateLimiter.close();
    await db.close();
  }
}

/**
 * Whether a bulk load may build the lots' indexes after it (storage/deferred-indexes.ts), which it
 * does only into an empty catalogue: not when a server serves the SQLite file meanwhile, whose
 * searches would read the table without them. A PostgreSQL database cannot tell who else reads it;
 * a server on an empty catalogue has nothing to find yet, so the load defers there too.
 */
export function mayDeferIndexes(config: Config): boolean {
  return config.database.kind !== 'sqlite' || servingProcesses(config.database.file).length === 0;
}
