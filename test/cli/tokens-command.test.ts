import { afterAll, describe, expect, it } from 'vitest';
import { makeDataDir, openCliDatabase, runCliInProcess } from './run-cli.ts';

/** `vinhistory tokens create --test` (the CLI's main, in-process): a sandbox token that searches without a plan. */
describe('vinhistory tokens create --test', () => {
  const data = makeDataDir();
  const cli = (...args: string[]) => runCliInProcess(args, { dataDir: data.dir });
  afterAll(() => data.remove());

  it('prints a vh_test_ token alone on stdout, for an account with no plan, with no warning; revoke takes it', async () => {
    const created = await cli('accounts', 'create', '--email', 'dev@example.com', '--plan', 'standard');
    expect(created.code, created.stderr).toBe(0);
    const { db, repos } = await openCliDatabase(data.dir);
    try {
      const account = (await repos.accounts.findByEmail('dev@example.com'))!;
      await repos.subscriptions.cancelActive(account.id);
    } finally {
      await db.close();
    }

    const [test, live] = await Promise.all([
      cli('tokens', 'create', '--email', 'dev@example.com', '--name', 'sandbox', '--test'),
      cli('tokens', 'create', '--email', 'dev@example.com', '--name', 'live'),
    ]);
    expect(test.code, test.stderr).toBe(0);
    expect(test.stdout).toMatch(/^vh_test_[0-9A-Za-z]{32}\n$/);
    expect(test.stderr).toBe('');
    expect(live.stdout).toMatch(/^vh_live_[0-9A-Za-z]{32}\n$/);
    expect(live.stderr).toContain('no subscription in force');

    const second = await openCliDatabase(data.dir);
    try {
      const principal = await second.repos.tokens.authenticate(test.stdout.trim());
      expect(principal).toMatchObject({ sandbox: true, subscription: null });
      const tokens = await second.repos.tokens.listForAccount(principal!.accountId);
      expect(tokens.map((token) => [token.name, token.kind]).sort()).toEqual([['live', 'live'], ['sandbox', 'test']]);
    } finally {
      await second.db.close();
    }

    const revoked = await cli('tokens', 'revoke', '--token', test.stdout.trim());
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stdout).toBe('token revoked\n');
  });
});
