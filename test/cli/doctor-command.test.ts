import path from 'node:path';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { newTestSchemaName } from '../support/databases.ts';
import { TEST_POSTGRES_URL } from '../support/env.ts';
import { makeDataDir, runCliInProcess } from './run-cli.ts';

const dirs: Array<{ remove(): void }> = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) dir.remove();
});

describe('vinhistory doctor', () => {
  it('a database never migrated: migrations fail, exit 1, and doctor itself migrates nothing', async () => {
    const data = makeDataDir();
    dirs.push(data);
    const env = { PDF_BROWSER_PATH: path.join(data.dir, 'no-browser') };
    const first = await runCliInProcess(['doctor'], { dataDir: data.dir, env });
    expect(first.code).toBe(1);
    expect(first.stdout).toMatch(/^check\s+status\s+detail\n/);
    expect(first.stdout).toMatch(/migrations\s+failed\s+migrations are behind: \d+ not run \(0001-initial, .*run vinhistory migrate/);
    // Outside production a missing browser and the outbox are warnings, not failures.
    expect(first.stdout).toMatch(/pdf-browser\s+warning\s+no browser at PDF_BROWSER_PATH/);
    expect(first.stdout).toMatch(/mail\s+warning\s+mail has no transport/);
    expect(first.stdout).toMatch(/not ready: 1 check failed\n$/);
    const again = await runCliInProcess(['doctor', '--json'], { dataDir: data.dir, env });
    expect(again.code).toBe(1);
    expect(JSON.parse(again.stdout)).toMatchObject({ ready: false, problems: [expect.stringMatching(/^migrations are behind/)] });

    expect((await runCliInProcess(['migrate'], { dataDir: data.dir })).code).toBe(0);
    const ready = await runCliInProcess(['doctor', '--json'], { dataDir: data.dir, env });
    expect(ready.code).toBe(0);
    const report = JSON.parse(ready.stdout) as { ready: boolean; checks: Array<{ name: string; status: string }> };
    expect(report.ready).toBe(true);
    expect(report.checks.find((c) => c.name === 'migrations')?.status).toBe('ok');
  });

  it('production: no mail transport, no browser and an unwritable photo store each fail', async () => {
    const data = makeDataDir();
    dirs.push(data);
    data.file('not-a-dir', 'x');
    expect((await runCliInProcess(['migrate'], { dataDir: data.dir })).code).toBe(0);
    const result = await runCliInProcess(['doctor', '--json'], {
      dataDir: data.dir,
      env: {
        NODE_ENV: 'production',
        PUBLIC_BASE_URL: 'https://api.example.com',
        PDF_BROWSER_PATH: path.join(data.dir, 'no-browser'),
        MEDIA_ARCHIVE: 'directory',
        MEDIA_DIR: path.join(data.dir, 'not-a-dir', 'media'),
      },
    });
    expect(result.code).toBe(1);
    const report = JSON.parse(result.stdout) as { checks: Array<{ name: string; status: string; detail: string }> };
    const failed = Object.fromEntries(report.checks.filter((c) => c.status === 'failed').map((c) => [c.name, c.detail]));
    expect(failed.mail).toMatch(/^mail has no transport/);
    expect(failed['pdf-browser']).toMatch(/^no browser at PDF_BROWSER_PATH/);
    expect(failed['media-store']).toMatch(/^the photo archive's directory store cannot be written: ENOTDIR/);
    expect(failed.setup).toMatch(/SELLER_NAME is not set/);
  });

  it.runIf(TEST_POSTGRES_URL)('on PostgreSQL: migrations behind in a fresh schema, then ok after migrate', async () => {
    const data = makeDataDir();
    dirs.push(data);
    const schema = newTestSchemaName();
    const admin = new pg.Client({ connectionString: TEST_POSTGRES_URL });
    await admin.connect();
    try {
      await admin.query(`create schema "${schema}"`);
      const url = new URL(TEST_POSTGRES_URL!);
      url.searchParams.set('options', `-c search_path=${schema}`);
      const env = { DATABASE_URL: url.toString(), PDF_BROWSER_PATH: path.join(data.dir, 'no-browser') };
      const behind = await runCliInProcess(['doctor', '--json'], { dataDir: data.dir, env });
      expect(behind.code).toBe(1);
      expect(JSON.parse(behind.stdout)).toMatchObject({ ready: false, problems: [expect.stringMatching(/^migrations are behind: \d+ not run \(0001-initial/)] });
      expect((await runCliInProcess(['migrate'], { dataDir: data.dir, env })).code).toBe(0);
      const ready = await runCliInProcess(['doctor'], { dataDir: data.dir, env });
      expect(ready.stdout).toMatch(/migrations\s+ok\s+the schema is up to date/);
      expect(ready.code).toBe(0);
    } finally {
      await admin.query(`drop schema if exists "${schema}" cascade`);
      await admin.end();
    }
  });
});
