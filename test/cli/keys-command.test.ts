import { afterAll, describe, expect, it } from 'vitest';
import { CompactSign, compactVerify, importJWK, type JWK } from 'jose';
import { migrateToLatest } from '../../src/storage/database.ts';
import { SigningKeys } from '../../src/verification/signing-keys.ts';
import { SecretKeeper } from '../../src/webhooks/secret-keeper.ts';
import { makeDataDir, openCliDatabase, runCliInProcess } from './run-cli.ts';

describe('vinhistory keys', () => {
  const data = makeDataDir();
  const cli = (...args: string[]) => runCliInProcess(args, { dataDir: data.dir });
  afterAll(() => data.remove());

  it('lists no key before the first, rotates to a new current key and lists every key, the private halves sealed in the database', async () => {
    const opened = await openCliDatabase(data.dir);
    await migrateToLatest(opened.db);
    await opened.db.close();

    const empty = await cli('keys', 'list');
    expect(empty.code).toBe(0);
    expect(empty.stdout).toMatch(/No signing key yet/);

    const first = await cli('keys', 'rotate', '--json');
    expect(first.code).toBe(0);
    const made = JSON.parse(first.stdout) as { kid: string; current: boolean };
    expect(made.current).toBe(true);
    const second = await cli('keys', 'rotate');
    expect(second.code).toBe(0);
    const kid = /New signing key (\S+):/.exec(second.stdout)![1]!;

    const listed = JSON.parse((await cli('keys', 'list', '--json')).stdout) as { kid: string; current: boolean }[];
    expect(listed.map((key) => [key.kid, key.current])).toEqual([
      [kid, true],
      [made.kid, false],
    ]);
    const table = (await cli('keys', 'list')).stdout;
    expect(table).toContain(`${kid}`);
    expect(table).toMatch(/yes \(current\)/);

    // Stored sealed: no PEM in the database; the service opens it with the deployment's key and signs with the newest.
    const again = await openCliDatabase(data.dir);
    try {
      const rows = await again.db.kysely.selectFrom('signing_keys').selectAll().execute();
      expect(rows).toHaveLength(2);
      for (const row of rows) expect(row.private_sealed).not.toMatch(/PRIVATE KEY/);
      // Each rotation is in the operators' audit log, naming the new key.
      const audit = await again.db.kysely.selectFrom('operator_audit').select(['action', 'target', 'actor']).orderBy('id').execute();
      expect(audit.map((entry) => [entry.action, entry.target])).toEqual([
        ['signing_key.rotate', made.kid],
        ['signing_key.rotate', kid],
      ]);
      expect(audit[0]!.actor).toMatch(/^cli:/);
      const keys = new SigningKeys({ repo: again.repos.reportSignatures, secrets: new SecretKeeper(null, again.repos.settings) });
      const signer = await keys.signer();
      expect(signer.kid).toBe(kid);
      const jws = await new CompactSign(new TextEncoder().encode('{}')).setProtectedHeader({ alg: 'EdDSA', kid }).sign(signer.key);
      const jwk = (await keys.jwks()).keys.find((key) => key.kid === kid)!;
      await compactVerify(jws, await importJWK(jwk as JWK, 'EdDSA'));
    } finally {
      await again.db.close();
    }
  });
});
