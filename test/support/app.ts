import pino from 'pino';
import type { FastifyBaseLogger, FastifyServerOptions } from 'fastify';
import { buildApp, type App } from '../../src/app.ts';
import { loadConfig, type Config } from '../../src/config.ts';
import { createContainer, type ContainerOverrides } from '../../src/container.ts';
import type { Db, DialectName } from '../../src/storage/database.ts';
import { MemoryRateLimiter } from '../../src/limits/rate/memory-rate-limiter.ts';
import type { RateLimiter } from '../../src/limits/rate/rate-limiter.ts';
import { createTestDatabase, type TestDatabase } from './databases.ts';
import { recordDocumentedStatuses } from './documented-statuses.ts';

export const TEST_BASE_URL = 'https://vinhistory.test';

export function testConfig(env: Record<string, string> = {}): Config {
  return loadConfig({ NODE_ENV: 'test', PUBLIC_BASE_URL: TEST_BASE_URL, DATA_DIR: '/tmp/vinhistory-test', LOG_LEVEL: 'silent', ...env });
}

export interface TestApp extends TestDatabase {
  app: App;
  rateLimiter: RateLimiter;
  close(): Promise<void>;
}

export interface AppOnOptions {
  config: Config;
  db: Db;
  rateLimiter?: RateLimiter;
  now?: () => Date;
  overrides?: ContainerOverrides;
  logger?: FastifyServerOptions['logger'];
  /** Where the app and its services log; silent when neither this nor `logger` is given. */
  loggerInstance?: FastifyBaseLogger;
}

/**
 * The real application on a given database: the container's services and the app over them, as
 * server.ts builds them. Closing the app closes the services too.
 */
export async function buildAppOn(options: AppOnOptions): Promise<App> {
  const log = options.loggerInstance ?? pino({ level: 'silent' });
  const services = createContainer({
    config: options.config,
    db: options.db,
    log,
    ...(options.rateLimiter ? { rateLimiter: options.rateLimiter } : {}),
    ...(options.now ? { now: options.now } : {}),
    ...(options.overrides ? { overrides: options.overrides } : {}),
  });
  const app = await buildApp({
    services,
    ...(options.loggerInstance ? { loggerInstance: options.loggerInstance } : { logger: options.logger ?? false }),
  });
  app.addHook('onClose', () => services.close());
  recordDocumentedStatuses(app);
  return app;
}

/** The real application on a fresh database, for inject(). */
export async function createTestApp(
  dialect: DialectName = 'sqlite',
  options: { now?: () => Date; rateLimiter?: RateLimiter; config?: Config; maxConnections?: number } = {},
): Promise<TestApp> {
  const database = await createTestDatabase(dialect, options.maxConnections ? { maxConnections: options.maxConnections } : {});
  const rateLimiter = options.rateLimiter ?? new MemoryRateLimiter();
  const app = await buildAppOn({
    config: options.config ?? testConfig(),
    db: database.db,
    rateLimiter,
    ...(options.now ? { now: options.now } : {}),
  });
  await app.ready();
  return {
    ...database,
    app,
    rateLimiter,
    close: async () => {
      await app.close();
      await rateLimiter.close();
      await database.destroy();
    },
  };
}
