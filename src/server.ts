import closeWithGrace from 'close-with-grace';
import { buildApp } from './app.ts';
import { createContainer } from './container.ts';
import { createLogger } from './observability/logger.ts';
import type { Config } from './config.ts';
import { markServing, migrateToLatest, openDatabase } from './storage/database.ts';
import { ensureDemoData } from './dev/demo/first-run.ts';
import { Metrics } from './observability/metrics.ts';

const HOUR_MS = 60 * 60 * 1000;
/**
 * How long a shutdown waits for in-flight requests and webhook attempts before it gives up on
 * them: past the 10 s a webhook attempt may take, so that it is recorded.
 */
const SHUTDOWN_GRACE_MS = 15_000;
const STOP_SIGNALS = ['SIGTERM', 'SIGINT'] as const;
/** Two stop signals closer together than this are one stop delivered twice (see onStopSignal). */
const REPEATED_SIGNAL_MS = 1_000;

/**
 * Starts the process: database, migrations, first-run demo data, the app, the port, and a clean
 * shutdown on SIGTERM/SIGINT: stop accepting, let in-flight requests finish (each one's count,
 * search record and report commit together or not at all), let the mail worker finish the sends
 * under way, then close Redis and the database. The webhook delivery worker runs here too unless
 * WEBHOOK_WORKER=false.
 */
export async function startServer(config: Config): Promise<void> {
  const log = createLogger(config);
  const db = await openDatabase(config.database, {
    lockTimeoutMs: config.databaseLockTimeoutMs,
    backgroundCheckpoint: true,
    searchCommitThread: config.sqliteCommitThread,
    onBackgroundError: (message) => log.warn({ error: message }, 'sqlite checkpoint failed'),
  });
  await migrateToLatest(db);
  // `vinhistory restore` refuses while this file says a server holds the SQLite database.
  const unmarkServing = config.database.kind === 'sqlite' ? markServing(config.database.file) : () => {};
  process.once('exit', unmarkServing);
  const services = createContainer({ config, db, log, metrics: new Metrics() });
  const app = await buildApp({ services, loggerInstance: log });
  // The report signing key is made on the first start (docs/reports.md), before any report is asked for.
  const signingKey = await services.signingKeys.ensure();
  log.info({ kid: signingKey }, 'reports are signed with this key');

  const sweeper = setInterval(() => {
    services.search.deleteExpiredIdempotencyKeys().catch((error) => app.log.warn({ err: error }, 'idempotency key cleanup failed'));
  }, HOUR_MS);
  sweeper.unref();

  // Listen first: a start that fails (port taken) must exit non-zero and print no demo token.
  await app.listen({ port: config.port, host: config.host });
  // Sends the mail queued by requests (and any left by a previous run); stopped by services.close().
  services.mailDelivery.start();
  // Queues billing mail (invoices, receipts, quota warnings, a plan's end), once across every instance.
  services.billingMail.start();
  if (!config.isProduction) await ensureDemoData({ config, services, log: app.log });
  if (config.webhooks.workerInServe) services.deliveryWorker.start();
  // Pulls the registered feeds when due, one instance at a time per feed (docs/feeds.md).
  if (config.feeds.workerInServe) services.feedScheduler.start();
  // Runs stored batches, and resumes those an earlier run left (docs/batches in docs/api.md).
  services.batchRunner.start();
  // With the photo archive on, this instance copies queued photos in the background (docs/media.md).
  const archiver = services.media.createArchiver();
  if (archiver) {
    archiver.start();
    app.log.info({ store: services.media.storeKind }, 'photo archive on: archiving queued photos');
  }
  // The operator's setup, said at start as /readyz says it: what customers cannot do until it is done.
  // In the background: in production it starts the PDF browser once, which need not delay taking requests.
  void services.readiness.check().then(
    ({ problems }) => {
      if (problems.length > 0) app.log.warn({ problems }, `not ready for customers: ${problems.join('; ')} (GET /readyz lists what remains)`);
    },
    (error: unknown) => app.log.warn({ err: error }, 'readiness check at start failed'),
  );

  /**
   * Fastify closes the keep-alive connections that are idle when it starts closing, once; one
   * whose response was still finishing then (a photo's file stream on a busy machine) turns idle a
   * moment later and would hold the close until its keep-alive timeout, past the grace. So idle
   * connections are closed again until the server has closed; busy ones finish their request.
   */
  const closeApp = async () => {
    const sweep = setInterval(() => app.server.closeIdleConnections(), 100);
    try {
      await app.close();
    } finally {
      clearInterval(sweep);
    }
  };

  // SIGINT and SIGTERM are handled below, not by close-with-grace, which exits 1 at once on a second one.
  let stopSignal: NodeJS.Signals | undefined;
  const shutdown = closeWithGrace({ delay: SHUTDOWN_GRACE_MS, skip: [...STOP_SIGNALS] }, async ({ err }) => {
    if (err) app.log.error({ err }, 'shutting down after an error');
    else app.log.info({ signal: stopSignal }, 'shutting down: finishing in-flight requests');
    clearInterval(sweeper);
    // The workers claim no more work and let what is in flight finish (a webhook attempt: 10 s at
    // most) and be recorded, while the server drains its requests.
    await Promise.all([services.deliveryWorker.stop(), services.batchRunner.stop(), archiver?.stop(), services.feedScheduler.stop(), closeApp()]);
    await services.close();
    await db.close();
    unmarkServing();
    app.log.info('shut down cleanly');
  });

  /**
   * Ctrl-C under `npm start` reaches this process twice, from the terminal (its whole process group)
   * and forwarded by npm: a repeat within a moment is that same stop, not an operator insisting.
   * A later one gives up the drain and exits 1.
   */
  let firstStopAt: number | undefined;
  const onStopSignal = (signal: NodeJS.Signals) => {
    if (firstStopAt === undefined) {
      firstStopAt = Date.now();
      stopSignal = signal;
      void shutdown.close();
    } else if (Date.now() - firstStopAt > REPEATED_SIGNAL_MS) {
      app.log.error({ signal }, 'second stop signal: exiting without finishing in-flight work');
      process.exit(1);
    }
  };
  for (const signal of STOP_SIGNALS) process.on(signal, onStopSignal);
}
