import { afterAll, describe, expect, it } from 'vitest';
import { makeDataDir, openCliDatabase, runCli, runCliInProcess } from './run-cli.ts';

describe('vinhistory operator-tokens', () => {
  const data = makeDataDir();
  afterAll(() => data.remove());

  // In-process (run-cli.ts), but for the revocation that reads the token from stdin.
  it('creates a token printed alone, lists it without the secret, and revokes it by value or by id', async () => {
    const created = await runCliInProcess(['operator-tokens', 'create', '--name', 'copart scraper'], { dataDir: data.dir });
    expect(created.code).toBe(0);
    expect(created.stderr).toBe('');
    expect(created.stdout).toMatch(/^vh_op_[0-9A-Za-z]{32}\n$/);
    const token = created.stdout.trim();
    const second = (await runCliInProcess(['operator-tokens', 'create', '--name', 'partner'], { dataDir: data.dir })).stdout.trim();

    const listed = await runCliInProcess(['operator-tokens', 'list'], { dataDir: data.dir });
    expect(listed.stdout).toContain('copart scraper');
    expect(listed.stdout).toContain(`${token.slice(0, 10)}...`);
    expect(listed.stdout).not.toContain(token);
    expect(listed.stdout).not.toContain(second);

    // Only the hash is stored.
    const { db } = await openCliDatabase(data.dir);
    try {
      const rows = await db.kysely.selectFrom('operator_tokens').selectAll().execute();
      expect(rows).toHaveLength(2);
      expect(JSON.stringify(rows)).not.toContain(token.slice(10));
    } finally {
      await db.close();
    }

    expect(await runCli(['operator-tokens', 'revoke', '--token', '-'], { dataDir: data.dir, input: `${token}\n` })).toMatchObject({ code: 0, stdout: 'operator token revoked\n' });
    const again = await runCliInProcess(['operator-tokens', 'revoke', '--token', token], { dataDir: data.dir });
    expect(again).toMatchObject({ code: 1, stderr: 'error: No live operator token matches: it is unknown or already revoked.\n' });

    const json = JSON.parse((await runCliInProcess(['operator-tokens', 'list', '--json'], { dataDir: data.dir })).stdout) as { id: string; name: string; revoked_at: string | null }[];
    const partner = json.find((row) => row.name === 'partner')!;
    expect(json.find((row) => row.name === 'copart scraper')!.revoked_at).not.toBeNull();
    expect(await runCliInProcess(['operator-tokens', 'revoke', '--id', partner.id], { dataDir: data.dir })).toMatchObject({ code: 0 });
    expect((await runCliInProcess(['operator-tokens', 'list'], { dataDir: data.dir })).stdout).not.toMatch(/\blive\b/);

    // Every operator action is in the audit log (issue 27), and no secret is.
    const audit = await runCliInProcess(['audit', '--json'], { dataDir: data.dir });
    const entries = (JSON.parse(audit.stdout) as { entries: { action: string; target: string; actor: string }[] }).entries;
    expect(entries.map((entry) => [entry.action, entry.target])).toEqual([
      ['operator_token.revoke', partner.id],
      ['operator_token.revoke', `${token.slice(0, 10)}...`],
      ['operator_token.create', partner.id],
      ['operator_token.create', json.find((row) => row.name === 'copart scraper')!.id],
    ]);
    expect(entries.every((entry) => entry.actor.startsWith('cli:'))).toBe(true);
    expect(audit.stdout).not.toContain(token);
    expect(audit.stdout).not.toContain(second);
  });

  it('refuses what is not an operator token, a customer token included, without echoing it', async () => {
    const customerToken = `vh_live_${'a'.repeat(32)}`;
    const result = await runCliInProcess(['operator-tokens', 'revoke', '--token', customerToken], { dataDir: data.dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe('error: That is not a vinhistory operator token (expected vh_op_ followed by 32 letters and digits).\n');
    expect((await runCliInProcess(['operator-tokens', 'revoke'], { dataDir: data.dir })).code).toBe(2);
    expect((await runCliInProcess(['operator-tokens', 'create'], { dataDir: data.dir })).code).toBe(2);
  });
});
