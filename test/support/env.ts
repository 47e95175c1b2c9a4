/**
 * Which external services the suites run against. PostgreSQL and Redis suites run when their URLs
 * are set (.ci/run sets them). Under CI=true a missing URL is an error, never a silent skip; an
 * unreachable server fails the suites that use it.
 */
export const TEST_POSTGRES_URL = process.env.TEST_POSTGRES_URL || undefined;
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL || undefined;
export const IN_CI = process.env.CI === 'true' || process.env.CI === '1';
