import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_POSTGRES_URL } from '../support/env.ts';
import { DIALECTS, newTestSchemaName } from '../support/databases.ts';
import { makeDataDir, runCliInProcess, type CliResult } from './run-cli.ts';
import { userInfo } from 'node:os';

const TOKEN_LINE = /^vh_live_[0-9A-Za-z]{32}\n$/;
const ACTOR = `cli:${userInfo().username}`;

function ok(result: CliResult): CliResult {
  expect(result.code, result.stderr).toBe(0);
  return result;
}

/**
 * The operators' customer commands, in the order an operator uses them, on SQLite (a DATA_DIR)
 * and on PostgreSQL (DATABASE_URL into a schema of its own), each change checked in `audit`.
 */
describe.each(DIALECTS)('vinhistory customer operations on %s', (dialect) => {
  const data = makeDataDir();
  let env: Record<string, string> = {};
  let admin: pg.Client | null = null;
  const cli = (...args: string[]) => runCliInProcess(args, { dataDir: data.dir, env });
  const json = async (...args: string[]) => JSON.parse(ok(await cli(...args)).stdout);

  beforeAll(async () => {
    if (dialect === 'postgres') {
      const schema = newTestSchemaName();
      admin = new pg.Client({ connectionString: TEST_POSTGRES_URL });
      await admin.connect();
      await admin.query(`create schema "${schema}"`);
      const url = new URL(TEST_POSTGRES_URL!);
      url.searchParams.set('options', `-c search_path=${schema}`);
      env = { DATABASE_URL: url.toString() };
    }
  });
  afterAll(async () => {
    await admin?.end();
    data.remove();
  });

  it('lists, finds and shows accounts, with --json and cursor paging', async () => {
    for (const name of ['ann', 'bob', 'cat']) ok(await cli('accounts', 'create', '--email', `${name}@list.example`, '--plan', name === 'cat' ? 'vip' : 'standard'));
    const all = await json('accounts', 'list', '--email', '@list.example', '--json');
    expect(all.accounts.map((a: { email: string }) => a.email)).toEqual(['cat@list.example', 'bob@list.example', 'ann@list.example']);
    expect(all.accounts[0]).toMatchObject({ status: 'active', plan: 'vip', billing: 'monthly', usage: { used: 0, quota: 15000 } });
    expect(all.next_cursor).toBeNull();

    const vip = await json('accounts', 'list', '--plan', 'vip', '--json');
    expect(vip.accounts.map((a: { email: string }) => a.email)).toEqual(['cat@list.example']);

    const first = ok(await cli('accounts', 'list', '--email', 'list.example', '--limit', '2'));
    const rows = first.stdout.trimEnd().split('\n');
    expect(rows[0]).toMatch(/^id\s+email\s+status\s+plan\s+used\s+ends\s+created$/);
    expect(rows.slice(2).map((row) => row.split(/\s{2,}/)[1])).toEqual(['cat@list.example', 'bob@list.example']);
    const cursor = /^more: add --cursor (\S+)\n$/.exec(first.stderr)?.[1];
    expect(cursor).toBeDefined();
    const second = await json('accounts', 'list', '--email', 'list.example', '--limit', '2', '--cursor', cursor!, '--json');
    expect(second.accounts.map((a: { email: string }) => a.email)).toEqual(['ann@list.example']);

    const shown = ok(await cli('accounts', 'show', 'ann@list.example'));
    expect(shown.stdout).toMatch(/^account:  acct_[0-9a-z]{16} ann@list\.example\nstatus:   active\n/);
    expect(shown.stdout).toMatch(/plan:     standard, monthly, billed by operator, since /);
    expect(shown.stdout).toMatch(/use:      0 of 1000 searches this period/);

    const bad = await cli('accounts', 'list', '--cursor', 'nope');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/cursor: cursor is not one this listing gave/);
    expect((await cli('accounts', 'list', '--limit', '101')).code).toBe(2);
    expect((await cli('accounts', 'list', '--status', 'frozen')).code).toBe(2);
    const missing = await cli('accounts', 'show', 'nobody@list.example');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe('error: No account with email nobody@list.example.\n');
  });

  it('changes, extends and ends a subscription, each recorded in the audit log with the OS user', async () => {
    ok(await cli('accounts', 'create', '--email', 'dan@ops.example', '--plan', 'standard'));
    const changed = ok(await cli('subscriptions', 'change', '--email', 'dan@ops.example', '--plan', 'professional', '--billing', 'annual'));
    expect(changed.stdout).toBe('dan@ops.example moved from standard to professional (annual billing) from now\nnothing invoiced: the subscription is arranged with the operator\n');
    const shown = await json('accounts', 'show', 'dan@ops.example', '--json');
    expect(shown).toMatchObject({ plan: 'professional', billing: 'annual', provider: 'operator', ends_at: null });

    const same = await cli('subscriptions', 'change', '--email', 'dan@ops.example', '--plan', 'professional');
    expect(same.code).toBe(1);
    expect(same.stderr).toBe('error: dan@ops.example is already on the professional plan, billed annual.\n');
    const unknown = await cli('subscriptions', 'change', '--email', 'dan@ops.example', '--plan', 'gold');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/No plan with code "gold"\. Known plans: standard, professional, vip/);

    const openEnded = await cli('subscriptions', 'extend', '--email', 'dan@ops.example', '--days', '5');
    expect(openEnded.code).toBe(1);
    expect(openEnded.stderr).toBe('error: The subscription has no end date: it runs until it is ended.\n');
    const neither = await cli('subscriptions', 'extend', '--email', 'dan@ops.example');
    expect(neither.code).toBe(2);
    expect(neither.stderr).toContain('error: give either --until <date> or --days <n>');
    expect((await cli('subscriptions', 'extend', '--email', 'dan@ops.example', '--until', 'soon')).code).toBe(2);

    const ended = ok(await cli('subscriptions', 'end', '--email', 'dan@ops.example'));
    expect(ended.stdout).toMatch(/^ended the professional subscription \(sub_[0-9a-z]{16}\) of dan@ops\.example as of /);
    expect((await json('accounts', 'show', 'dan@ops.example', '--json')).status).toBe('lapsed');

    const restarted = ok(await cli('subscriptions', 'change', '--email', 'dan@ops.example', '--plan', 'standard'));
    expect(restarted.stdout).toMatch(/^started subscription sub_[0-9a-z]{16} of dan@ops\.example: plan standard, monthly billing, from /);

    const account = (await json('accounts', 'show', 'dan@ops.example', '--json')).id;
    const audit = await json('audit', '--target', account, '--json');
    expect(audit.entries.map((e: { action: string; actor: string }) => [e.action, e.actor])).toEqual([
      ['subscription.change', ACTOR],
      ['subscription.end', ACTOR],
      ['subscription.change', ACTOR],
      ['account.create', ACTOR],
    ]);
    expect(audit.entries[2].details).toMatchObject({ from: 'standard', plan: 'professional', billing: 'annual', provider: 'operator' });
    const table = ok(await cli('audit', '--limit', '1'));
    expect(table.stdout).toMatch(/^at\s+who\s+action\s+target\s+details\n/);
    expect(table.stdout).toContain(`${ACTOR}  subscription.change  ${account}`);
    expect(table.stderr).toMatch(/^more: add --cursor aud_[0-9a-z]{20}\n$/);
  });

  it('lists tokens as hints and revokes one by id; the secret is never printed or recorded', async () => {
    ok(await cli('accounts', 'create', '--email', 'eve@tokens.example', '--plan', 'standard'));
    const issued = ok(await cli('tokens', 'create', '--email', 'eve@tokens.example', '--name', 'server-1'));
    expect(issued.stdout).toMatch(TOKEN_LINE);
    const secret = issued.stdout.trim();
    const listed = await json('tokens', 'list', '--email', 'eve@tokens.example', '--json');
    expect(listed.tokens).toEqual([expect.objectContaining({ name: 'server-1', kind: 'live', hint: secret.slice(0, 12), revoked_at: null })]);
    const table = ok(await cli('tokens', 'list', '--email', 'eve@tokens.example'));
    expect(table.stdout).toContain(`${secret.slice(0, 12)}...`);
    expect(table.stdout).not.toContain(secret);

    const id = listed.tokens[0].id;
    expect(ok(await cli('tokens', 'revoke', '--id', id)).stdout).toBe(`token ${id} (server-1) revoked\n`);
    expect((await json('tokens', 'list', '--email', 'eve@tokens.example', '--json')).tokens[0].revoked_at).toEqual(expect.any(String));
    const again = await cli('tokens', 'revoke', '--id', id);
    expect(again.code).toBe(1);
    expect(again.stderr).toBe(`error: Token ${id} is already revoked.\n`);
    expect((await cli('tokens', 'revoke', '--id', 'tok_0000000000000000')).stderr).toBe('error: No token tok_0000000000000000.\n');
    const both = await cli('tokens', 'revoke', '--id', 'x', '--token', secret);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('error: give either --id <id> or --token <token>');
    expect(both.stderr).not.toContain(secret);
    expect((await cli('tokens', 'revoke')).code).toBe(2);

    const audit = await json('audit', '--target', id, '--json');
    expect(audit.entries.map((e: { action: string }) => e.action)).toEqual(['token.revoke', 'token.create']);
    expect(JSON.stringify(audit)).not.toContain(secret);
  });

  it('lists invoices as JSON and refuses to pay or void one that does not exist', async () => {
    expect(await json('invoices', 'list', '--json')).toEqual({ invoices: [], next_cursor: null });
    const pay = await cli('invoices', 'pay', 'VH-AAAA-BBBB');
    expect(pay.code).toBe(1);
    expect(pay.stderr).toBe('error: No invoice with id or reference VH-AAAA-BBBB.\n');
    expect((await cli('invoices', 'void', 'inv_0000000000000000')).code).toBe(1);
    ok(await cli('invoices', 'payee', 'Acme Data Ltd, IBAN GB33 BUKB 2020 1555 5555 55'));
    const [entry] = (await json('audit', '--limit', '1', '--json')).entries;
    expect(entry).toMatchObject({ action: 'invoice.payee', actor: ACTOR, details: { set: true } });
  });
});
