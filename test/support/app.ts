import { buildApp, type App } from '../../src/app.ts';
import { loadConfig, type Config } from '../../src/config.ts';
import type { DialectName } from '../../src/db/database.ts';
import { MemoryRateLimiter } from '../../src/services/rate-limiter/memory-rate-limiter.ts';
import type { RateLimiter } from '../../src/services/rate-limiter/rate-limiter.ts';
import { createTestDatabase, type TestDatabase } from './databases.ts';

export const TEST_BASE_URL = 'https://vinhistory.test';

export function testConfig(env: Record<string, string> = {}): Config {
  return loadConfig({ NODE_ENV: 'test', PUBLIC_BASE_URL: TEST_BASE_URL, DATA_DIR: '/tmp/vinhistory-test', LOG_LEVEL: 'silent', ...env });
}

export interface TestApp extends TestDatabase {
  app: App;
  rateLimiter: RateLimiter;
  close(): Promise<void>;
}

/** The real application on a fresh database, for inject(). */
export async function createTestApp(
  dialect: DialectName = 'sqlite',
  options: { now?: () => Date; rateLimiter?: RateLimiter; config?: Config; maxConnections?: number } = {},
): Promise<TestApp> {
  const database = await createTestDatabase(dialect, options.maxConnections ? { maxConnections: options.maxConnections } : {});
  const rateLimiter = options.rateLimiter ?? new MemoryRateLimiter();
  const app = await buildApp({
    config: options.config ?? testConfig(),
    db: database.db,
    repos: database.repos,
    rateLimiter,
    logger: false,
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
