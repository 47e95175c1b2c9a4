import { defineConfig } from 'vitest/config';

/*
 * Three projects, every test file in exactly one (CONTRIBUTING.md, "Test"):
 * - unit: code alone. No Fastify app, no database (not even SQLite in memory), no process or worker
 *   thread started (test/ingest/worker/ loads the sources anew in each thread), no build, no
 *   PostgreSQL or Redis. Listed by folder and file below; a new file goes here only
 *   when it keeps to that.
 * - system: what starts processes (the CLI, Chromium for pages and PDFs, php), what needs a
 *   PostgreSQL or Redis server to run at all (the whole file skips without one), and scale-out.
 *   The only project that rebuilds dist/ (the CLIs it spawns run the build).
 * - app: everything else. The app through inject() on SQLite in memory, the storage and service
 *   suites on SQLite; a file parametrised over DIALECTS also runs on PostgreSQL when
 *   TEST_POSTGRES_URL is set, and a file with a Redis part runs it when TEST_REDIS_URL is set.
 * Precedence unit, then system, then app: app is the rest by construction (everything, minus the
 * other two) and system leaves out what unit lists, so every file lands in exactly one project.
 */
const UNIT = [
  'test/architecture.test.ts',
  'test/repository-bounds.test.ts',
  'test/config.test.ts',
  'test/accounts/principal-cache.test.ts',
  'test/cli/command-line.test.ts',
  'test/dev/seed/**/*.test.ts',
  'test/domain/**/*.test.ts',
  'test/market/statistics.test.ts',
  'test/ingest/csv/**/*.test.ts',
  'test/ingest/formats/**/*.test.ts',
  'test/ingest/sources/**/*.test.ts',
  'test/ingest/local-time.test.ts',
  'test/ingest/normalise-lot.test.ts',
  'test/ingest/progress.test.ts',
  'test/ingest/record-limits.test.ts',
  'test/ingest/values.test.ts',
  'test/limits/billing-period.test.ts',
  'test/limits/guards.test.ts',
  'test/limits/rate/memory-rate-limiter.test.ts',
  'test/media/archive-pacer.test.ts',
  'test/search/sandbox/**/*.test.ts',
  'test/sdks/typescript-core.test.ts',
  'test/storage/database-busy.test.ts',
  'test/storage/dialects/postgres/batched-reads.test.ts',
  // Feeds: the checks and the paging rules alone.
  'test/feeds/feed-checks.test.ts',
  'test/feeds/paging.test.ts',
];

const SYSTEM = [
  // Processes: the CLI (through dist/), Chromium, pdftotext, php, Prism.
  'test/browser/**/*.test.ts',
  'test/cli/**/*.test.ts',
  'test/dev/demo/first-run.test.ts',
  'test/http/api/v1/principal-cache.test.ts',
  'test/http/plugins/prism-proxy.test.ts',
  'test/web/account/brand.test.ts',
  'test/web/report/pdf-renderer.test.ts',
  'test/web/report/report-pdf.test.ts',
  'test/webhooks/signature-samples.test.ts',
  // Both SDKs against a live server; the Python one in a virtualenv it makes (and caches).
  'test/sdks/live-server.test.ts',
  'test/verification/report-samples.test.ts',
  // Nothing to run without PostgreSQL or Redis.
  'test/limits/rate/redis-health.test.ts',
  'test/limits/rate/redis-rate-limiter.test.ts',
  // A redis-server of its own, killed and started again, with a timed traffic through it.
  'test/limits/rate/create-rate-limiter.test.ts',
  'test/media/archiver-shared.test.ts',
  'test/storage/dialects/postgres/commits.test.ts',
  'test/storage/dialects/postgres/connection.test.ts',
  'test/storage/dialects/postgres/search-commit.test.ts',
  'test/webhooks/concurrent-workers.test.ts',
  // Several instances of the service on PostgreSQL and Redis.
  'test/scale-out/**/*.test.ts',
];

const ALL = ['test/**/*.test.ts'];

/*
 * Unit and app files run two at a time (vitest's default on 2 cores is one): most of their time
 * is waiting on PostgreSQL, Redis, SQLite files and local servers, not CPU. Each file makes its own
 * databases (a PostgreSQL schema of its own, introspected alone: dialects/postgres/connection.ts),
 * servers on port 0 and data folders, so two never share anything. The system files run one at a
 * time after them: they start servers, Chromium and CLIs whose own timeouts assume a core each.
 * VITEST_WORKERS sets another count for unit and app (1: one file at a time).
 */
const QUICK_WORKERS = Number(process.env.VITEST_WORKERS ?? 2);

export default defineConfig({
  test: {
    pool: 'forks',
    // A worker runs file after file with the modules it has already imported, instead of a fresh
    // process importing the sources again for every file (342 s of a 1,888 s full run on a loaded
    // machine went to imports; 15 s without). Files share no state through modules: each makes
    // its own databases, servers and data folders, and restores what it changes.
    isolate: false,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default'],
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: UNIT, maxWorkers: QUICK_WORKERS, sequence: { groupOrder: 0 } },
      },
      {
        extends: true,
        test: {
          name: 'app',
          include: ALL,
          exclude: [...UNIT, ...SYSTEM],
          globalSetup: ['test/support/global-setup.ts'],
          maxWorkers: QUICK_WORKERS,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'system',
          include: SYSTEM,
          // A unit file inside a system folder (test/cli/command-line.test.ts) stays a unit file.
          exclude: UNIT,
          globalSetup: ['test/support/global-setup.ts', 'test/support/build-setup.ts'],
          maxWorkers: 1,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
