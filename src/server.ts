import closeWithGrace from 'close-with-grace';
import { buildApp } from './app.ts';
import { createLogger } from './logger.ts';
import type { Config } from './config.ts';
import { migrateToLatest, openDatabase } from './db/database.ts';
import { ensureDemoData } from './demo/first-run.ts';
import { createRepositories } from './repositories/index.ts';
import { Metrics } from './services/metrics.ts';
import { createRateLimiter } from './services/rate-limiter/create-rate-limiter.ts';

const HOUR_MS = 60 * 60 * 1000;
/** How long a shutdown waits for in-flight requests before it gives up on them. */
const SHUTDOWN_GRACE_MS = 10_000;

/**
 * Starts the process: database, migrations, first-run demo data, the app, the port, and a clean
 * shutdown on SIGTERM/SIGINT: stop accepting, let in-flight requests finish (each one's count,
 * search record and report commit together or not at all), then close Redis and the database.
 */
export async function startServer(config: Config): Promise<void> {
  const log = createLogger(config);
  const db = await openDatabase(config.database, {
    backgroundCheckpoint: true,
    onBackgroundError: (message) => log.warn({ error: message }, 'sqlite checkpoint failed'),
  });
  await migrateToLatest(db);
  const repos = createRepositories(db);
  const metrics = new Metrics();
  const limiter = createRateLimiter(config, metrics, log.child({ component: 'rate-limiter' }));
  const app = await buildApp({ config, db, repos, metrics, rateLimiter: limiter.limiter, loggerInstance: log });

  const sweeper = setInterval(() => {
    repos.searches.deleteExpiredIdempotencyKeys().catch((error) => app.log.warn({ err: error }, 'idempotency key cleanup failed'));
  }, HOUR_MS);
  sweeper.unref();

  // Listen first: a start that fails (port taken) must exit non-zero and print no demo token.
  await app.listen({ port: config.port, host: config.host });
  if (!config.isProduction) await ensureDemoData({ config, repos, log: app.log });

  closeWithGrace({ delay: SHUTDOWN_GRACE_MS }, async ({ signal, err }) => {
    if (err) app.log.error({ err }, 'shutting down after an error');
    else app.log.info({ signal }, 'shutting down: finishing in-flight requests');
    clearInterval(sweeper);
    await app.close();
    await limiter.close();
    await db.close();
    app.log.info('shut down cleanly');
  });
}
