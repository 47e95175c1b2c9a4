import { existsSync } from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { searchesFileOf } from '../../src/storage/dialects/sqlite/searches-file.ts';
import { createCustomer } from '../support/fixtures.ts';
import { startInstance, stopInstance, type Instance } from '../scale-out/instances.ts';
import { makeDataDir, openCliDatabase, runCli } from './run-cli.ts';

const dirs: Array<{ remove(): void }> = [];
const instances: Instance[] = [];
afterEach(async () => {
  for (const instance of instances.splice(0)) await stopInstance(instance);
  for (const dir of dirs.splice(0)) dir.remove();
});

/** The search records of an account in a database (its main file, its searches file beside it), read with nothing but SQLite. */
function searchIds(file: string, accountId: string): string[] {
  const db = new BetterSqlite3(file, { readonly: true, fileMustExist: true });
  try {
    db.prepare('attach database ? as searches').run(searchesFileOf(file));
    return db.prepare('select id from searches where account_id = ? order by id').pluck().all(accountId) as string[];
  } finally {
    db.close();
  }
}

describe('vinhistory backup and restore (SQLite)', () => {
  it('a backup taken while searches commit is sound and holds every search committed before it began; restore is refused while the server runs', async () => {
    const data = makeDataDir();
    dirs.push(data);
    const env = { DATA_DIR: data.dir, PUBLIC_BASE_URL: 'https://api.example.com', MAIL_TRANSPORT: 'outbox' };
    const server = await startInstance(env);
    instances.push(server);
    const { db, repos } = await openCliDatabase(data.dir);
    const customer = await createCustomer(repos, { quota: 1_000_000, rate: 1_000_000 });
    await db.close();

    // Searches committing all the time: each one (404 here: the database has no lots) is counted and recorded.
    let stop = false;
    let answered = 0;
    const load = Array.from({ length: 4 }, async (_, worker) => {
      for (let i = 0; !stop; i++) {
        // Not North American, so no check digit: any six digits make a valid VIN that has no lots.
        const vin = `WVWZZZ1JZ3W${String(100_000 + worker * 10_000 + (i % 10_000)).slice(-6)}`;
        const response = await fetch(`${server.url}/api/v1/search?vin=${vin}`, { headers: { Authorization: customer.token } });
        await response.arrayBuffer();
        if (response.status === 404) answered += 1;
      }
    });
    while (answered < 50) await new Promise((resolve) => setTimeout(resolve, 20));

    const file = path.join(data.dir, 'vinhistory.sqlite');
    const before = searchIds(file, customer.accountId);
    const backupFile = path.join(data.dir, 'backup.sqlite');
    const backup = await runCli(['backup', backupFile], { dataDir: data.dir, env: { NODE_ENV: 'production', PUBLIC_BASE_URL: env.PUBLIC_BASE_URL } });
    const after = searchIds(file, customer.accountId);
    stop = true;
    await Promise.all(load);
    expect(backup.stderr).toBe('');
    expect(backup.code).toBe(0);
    expect(backup.stdout).toMatch(/^backed up .* to .*backup\.sqlite \(\d+ bytes, integrity check ok\); its searches file to .*backup-searches\.sqlite \(\d+ bytes, integrity check ok\)\n$/);
    expect(after.length).toBeGreaterThan(before.length);

    for (const copyFile of [backupFile, searchesFileOf(backupFile)]) {
      const copy = new BetterSqlite3(copyFile, { readonly: true });
      expect(copy.pragma('integrity_check', { simple: true })).toBe('ok');
      copy.close();
    }
    const inCopy = searchIds(backupFile, customer.accountId);
    // Every search committed before the backup began is in it, and nothing that was never committed.
    expect(inCopy).toEqual(expect.arrayContaining(before));
    expect(after).toEqual(expect.arrayContaining(inCopy));
    expect(inCopy.length).toBeGreaterThanOrEqual(before.length);

    // A second backup to the same name is refused rather than overwriting the first.
    const again = await runCli(['backup', backupFile], { dataDir: data.dir });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('exists already');

    const refused = await runCli(['restore', backupFile], { dataDir: data.dir });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/restore: refused: a server is running on .*vinhistory\.sqlite \(process \d+\); stop it first/);

    await stopInstance(server);
    instances.splice(0);
    const restored = await runCli(['restore', backupFile], { dataDir: data.dir });
    expect(restored.stderr).toBe('');
    expect(restored.code).toBe(0);
    const kept = /kept as (.+)\n$/.exec(restored.stdout)?.[1];
    expect(kept && existsSync(kept)).toBe(true);
    expect(searchIds(file, customer.accountId)).toEqual(inCopy);
    expect(searchIds(kept!, customer.accountId).length).toBeGreaterThanOrEqual(after.length);
  }, 120_000);

  it('restore refuses a file that is not a sound vinhistory database; both refuse PostgreSQL', async () => {
    const data = makeDataDir();
    dirs.push(data);
    const junk = data.file('junk.sqlite', 'not a database at all, just text that is long enough to be read');
    const result = await runCli(['restore', junk], { dataDir: data.dir });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/restore: .*junk\.sqlite is not a sound vinhistory database/);
    expect(existsSync(path.join(data.dir, 'vinhistory.sqlite'))).toBe(false);
    const pg = await runCli(['backup', path.join(data.dir, 'x')], { dataDir: data.dir, env: { DATABASE_URL: 'postgres://127.0.0.1:1/none' } });
    expect(pg.code).toBe(1);
    expect(pg.stderr).toContain('use pg_dump and pg_restore');
  });
});
