import { afterAll, describe, expect, it } from 'vitest';
import { makeDataDir, openCliDatabase, runCli, runCliInProcess, type CliResult } from './run-cli.ts';

/**
 * The admin commands in the order an operator uses them, on one fresh DATA_DIR. They run the CLI's
 * main in-process (runCliInProcess), except where the process itself is under test: the help and
 * usage errors of the real binary, a token read from its stdin, and a command that opens the
 * database and exits on its own. Option validation is covered by command-line.test.ts.
 */
const TOKEN_LINE = /^vh_live_[0-9A-Za-z]{32}\n$/;
const STACK_FRAME = /\n\s+at /;

function expectFailure(result: CliResult, code: number, message: string | RegExp) {
  expect(result.code, result.stderr).toBe(code);
  expect(result.stderr).toMatch(message);
  expect(result.stderr).not.toMatch(STACK_FRAME);
  expect(result.stdout).toBe('');
}

describe('vinhistory admin commands', () => {
  const data = makeDataDir();
  const cli = (...args: string[]) => runCliInProcess(args, { dataDir: data.dir });
  /** `node bin/vinhistory.js ...args`, for what only a process of its own can show. */
  const spawned = (...args: string[]) => runCli(args, { dataDir: data.dir });
  const spawnedWithInput = (input: string, ...args: string[]) => runCli(args, { dataDir: data.dir, input });

  afterAll(() => data.remove());

  it('prints its help, and refuses a missing or unknown command with exit 2', async () => {
    const [help, none, unknown] = await Promise.all([spawned('--help'), spawned(), spawned('frobnicate')]);
    expect(help.code).toBe(0);
    for (const command of ['serve', 'migrate', 'import', 'plans', 'accounts', 'tokens', 'subscriptions']) {
      expect(help.stdout).toContain(`  ${command}`);
    }
    expect(help.stdout).toMatch(/Exit status: 0 done; 1 the command failed.*; 2 the command line is wrong/s);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('Usage: vinhistory');
    expectFailure(unknown, 2, /unknown command 'frobnicate'/);
  });

  it('creates a custom plan on a fresh DATA_DIR and lists it after the public ones', async () => {
    const created = await cli(
      'plans', 'create', '--code', 'acme-enterprise', '--name', 'Acme Enterprise',
      '--quota', '100000', '--rate', '20', '--price-cents', '150000',
    );
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toBe(
      'created plan acme-enterprise (Acme Enterprise): 100000 searches/month, 20/second, $1,500.00/month or $18,000.00/year, 100 watches\n',
    );

    const list = await cli('plans', 'list');
    expect(list.code).toBe(0);
    const rows = list.stdout.trimEnd().split('\n');
    expect(rows[0]).toMatch(/^CODE\s+NAME\s+SEARCHES\/MONTH\s+PER SECOND\s+MONTHLY\s+ANNUAL\s+WATCHES\s+LISTING$/);
    expect(rows.slice(2).map((row) => row.split(/\s{2,}/))).toEqual([
      ['standard', 'Standard', '1000', '2', '$50.00', '$600.00', '100', 'public, favourite'],
      ['professional', 'Professional', '5000', '5', '$150.00', '$1,440.00', '500', 'public'],
      ['vip', 'VIP', '15000', '10', '$400.00', '$3,840.00', '2000', 'public'],
      ['acme-enterprise', 'Acme Enterprise', '100000', '20', '$1,500.00', '$18,000.00', '100', 'custom'],
    ]);

    // An operator action: in the audit log with what the plan is (issue 27).
    const audit = JSON.parse((await cli('audit', '--target', 'acme-enterprise', '--json')).stdout) as { entries: { action: string; details: object }[] };
    expect(audit.entries).toEqual([
      expect.objectContaining({ action: 'plan.create', details: { name: 'Acme Enterprise', monthly_quota: 100000, rate_per_second: 20, monthly_price_cents: 150000, annual_price_cents: 1800000, watch_limit: 100 } }),
    ]);
  });

  it('refuses a duplicate plan code', async () => {
    const duplicate = await cli('plans', 'create', '--code', 'acme-enterprise', '--name', 'Acme', '--quota', '10', '--rate', '1', '--price-cents', '0');
    expectFailure(duplicate, 1, 'error: A plan with code "acme-enterprise" already exists.');
  });

  let token = '';

  it('creates an account with a subscription in force, then a token that authenticates', async () => {
    const created = await cli('accounts', 'create', '--email', ' Buyer@Example.COM ', '--plan', 'acme-enterprise', '--billing', 'annual');
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toMatch(/^created account acct_[0-9a-z]{16} for buyer@example\.com\n/);

    const issued = await cli('tokens', 'create', '--email', 'buyer@example.com', '--name', 'ci');
    expect(issued.code, issued.stderr).toBe(0);
    expect(issued.stdout).toMatch(TOKEN_LINE);
    expect(issued.stderr).toBe('');
    token = issued.stdout.trim();

    const { db, repos } = await openCliDatabase(data.dir);
    try {
      const account = await repos.accounts.findByEmail('buyer@example.com');
      const principal = await repos.tokens.authenticate(token);
      expect(principal?.accountId).toBe(account!.id);
      expect(principal?.subscription).toMatchObject({ planCode: 'acme-enterprise', billing: 'annual', monthlyQuota: 100000 });
      expect(Date.now() - Date.parse(principal!.subscription!.startedAt)).toBeLessThan(60_000);
      expect((await repos.tokens.listForAccount(account!.id)).map((t) => t.name)).toEqual(['ci']);
    } finally {
      await db.close();
    }
  });

  it('refuses an unknown plan, a taken email and an unknown account', async () => {
    const [unknownPlan, taken, noAccount] = await Promise.all([
      cli('accounts', 'create', '--email', 'new@example.com', '--plan', 'gold'),
      cli('accounts', 'create', '--email', 'BUYER@example.com', '--plan', 'standard'),
      cli('tokens', 'create', '--email', 'nobody@example.com'),
    ]);
    expectFailure(unknownPlan, 1, 'error: No plan with code "gold". Known plans: standard, professional, vip, acme-enterprise.');
    expectFailure(taken, 1, 'error: An account with email buyer@example.com already exists.');
    expectFailure(noAccount, 1, 'error: No account with email nobody@example.com.');
  });

  it('revokes a token at once, from the option or from stdin, and never echoes a token in an error', async () => {
    const second = (await cli('tokens', 'create', '--email', 'buyer@example.com')).stdout.trim();
    const [revoked, fromStdin] = await Promise.all([
      cli('tokens', 'revoke', '--token', token),
      // A process of its own: it reads the token from stdin, opens the database and exits once done.
      spawnedWithInput(`${second}\n`, 'tokens', 'revoke', '--token', '-'),
    ]);
    expect(revoked).toEqual({ code: 0, stdout: 'token revoked\n', stderr: '' });
    expect(fromStdin).toEqual({ code: 0, stdout: 'token revoked\n', stderr: '' });

    const malformedToken = 'vh_live_tooShortToBeAToken';
    const [again, malformed] = await Promise.all([
      cli('tokens', 'revoke', '--token', token),
      cli('tokens', 'revoke', '--token', malformedToken),
    ]);
    expectFailure(again, 1, 'error: No live token matches: it is unknown or already revoked.');
    expect(again.stderr).not.toContain(token);
    expectFailure(malformed, 2, /not a vinhistory API token/);
    expect(malformed.stderr).not.toContain(malformedToken);

    const { db, repos } = await openCliDatabase(data.dir);
    try {
      expect(await repos.tokens.authenticate(token)).toBeNull();
      expect(await repos.tokens.authenticate(second)).toBeNull();
    } finally {
      await db.close();
    }
  });

  it('cancels a subscription now: the account keeps its tokens but has no plan in force', async () => {
    const live = (await cli('tokens', 'create', '--email', 'buyer@example.com')).stdout.trim();
    const cancelled = await cli('subscriptions', 'cancel', '--email', 'BUYER@example.com');
    expect(cancelled.code, cancelled.stderr).toBe(0);
    expect(cancelled.stdout).toMatch(/^cancelled the acme-enterprise subscription \(sub_[0-9a-z]{16}\) of buyer@example\.com as of \d{4}-\d{2}-\d{2}T/);

    const [twice, unknown, tokenWithoutPlan] = await Promise.all([
      cli('subscriptions', 'cancel', '--email', 'buyer@example.com'),
      cli('subscriptions', 'cancel', '--email', 'nobody@example.com'),
      cli('tokens', 'create', '--email', 'buyer@example.com'),
    ]);
    expectFailure(twice, 1, 'error: buyer@example.com has no subscription to cancel.');
    expectFailure(unknown, 1, 'error: No account with email nobody@example.com.');
    // stdout still holds the token alone; the warning goes to stderr.
    expect(tokenWithoutPlan.code).toBe(0);
    expect(tokenWithoutPlan.stdout).toMatch(TOKEN_LINE);
    expect(tokenWithoutPlan.stderr).toContain('has no subscription in force; searches with this token will answer 402');

    const { db, repos } = await openCliDatabase(data.dir);
    try {
      const principal = await repos.tokens.authenticate(live);
      expect(principal).not.toBeNull();
      expect(principal!.subscription).toBeNull();
    } finally {
      await db.close();
    }
  });

  it('reports a bad configuration without a stack trace', async () => {
    const result = await runCliInProcess(['plans', 'list'], { dataDir: data.dir, env: { PORT: 'eighty' } });
    expectFailure(result, 1, /Invalid configuration:\n {2}- PORT="eighty" is not valid/);
  });
});
