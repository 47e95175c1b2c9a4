import closeWithGrace from 'close-with-grace';
import { buildApp } from './app.ts';
import type { Config } from './config.ts';
import { migrateToLatest, openDatabase } from './db/database.ts';
import { ensureDemoData } from './demo/first-run.ts';
import { createRepositories } from './repositories/index.ts';
import { MemoryRateLimiter } from './services/rate-limiter/memory-rate-limiter.ts';

const HOUR_MS = 60 * 60 * 1000;

/**
 * Starts the process: database, migrations, first-run demo data, the app, the port, and a clean
 * shutdown on SIGTERM/SIGINT (stop accepting, finish in-flight requests, close the database).
 */
export async function startServer(config: Config): Promise<void> {
  const db = await openDatabase(config.database);
  await migrateToLatest(db);
  const repos = createRepositories(db);
  const rateLimiter = new MemoryRateLimiter();
  const app = await buildApp({ config, db, repos, rateLimiter });

  if (!config.isProduction) await ensureDemoData({ config, repos, log: app.log });

  const sweeper = setInterval(() => {
    repos.searches.deleteExpiredIdempotencyKeys().catch((error) => app.log.warn({ err: error }, 'idempotency key cleanup failed'));
  }, HOUR_MS);
  sweeper.unref();

  closeWithGrace({ delay: 10_000 }, async ({ signal, err }) => {
    if (err) app.log.error({ err }, 'shutting down after an error');
    else app.log.info({ signal }, 'shutting down');
    clearInterval(sweeper);
    await app.close();
    await rateLimiter.close();
    await db.close();
  });

  await app.listen({ port: config.port, host: config.host });
}
