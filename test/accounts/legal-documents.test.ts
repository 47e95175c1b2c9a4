import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { LEGAL_MAX_BYTES, LegalDocumentError } from '../../src/accounts/legal-documents.ts';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../support/databases.ts';
import { createAccountTestApp, type AccountTestApp } from '../support/customer-app.ts';
import { makeDataDir, openCliDatabase, runCliInProcess } from '../cli/run-cli.ts';

/** Production with the seller set: the legal pages are all /readyz still waits for. */
const PRODUCTION = {
  NODE_ENV: 'production',
  COOKIE_SECRET: 'x'.repeat(40),
  SELLER_NAME: 'Acme Vehicle Data Ltd',
  SELLER_ADDRESS: '1 Dock Road',
  SELLER_BANK_DETAILS: 'IBAN GB33 BUKB 2020 1555 5555 55',
  SUPPORT_EMAIL: 'help@acme.example',
  // The mail transport chosen on purpose, which production's readiness asks for (docs/deploy.md).
  MAIL_TRANSPORT: 'outbox',
};

/**
 * Nothing per instance (issue 27, item 3): two instances on one database, each with a DATA_DIR of
 * its own, serve the legal documents stored once, and are ready without a file on either disk.
 */
describe.each(DIALECTS)('legal documents shared by every instance (%s)', (dialect) => {
  let database: TestDatabase;
  let one: AccountTestApp;
  let two: AccountTestApp;
  beforeAll(async () => {
    database = await createTestDatabase(dialect);
    one = await createAccountTestApp(dialect, { env: PRODUCTION, database });
    two = await createAccountTestApp(dialect, { env: PRODUCTION, database });
  });
  afterAll(async () => {
    await one?.close();
    await two?.close();
    await database?.destroy();
  });

  test('stored through one instance, served by both and both ready; the stored copy wins over a LEGAL_DIR file; removed, the file shows again', async () => {
    expect(one.dataDir).not.toBe(two.dataDir);
    for (const instance of [one, two]) {
      const answer = await instance.app.inject({ url: '/readyz' });
      expect(answer.statusCode).toBe(503);
      expect(answer.json<{ problems: string[] }>().problems.join('\n')).toMatch(/vinhistory legal set terms[\s\S]*vinhistory legal set privacy/);
      expect((await instance.app.inject({ url: '/terms' })).statusCode).toBe(503);
    }

    await one.app.services.legal.set('terms', Buffer.from('# Terms\n\nThe shared terms, ünïcode kept.\n'));
    await one.app.services.legal.set('privacy', Buffer.from('# Privacy\n\nThe shared policy.\n'));
    for (const instance of [one, two]) {
      const ready = await instance.app.inject({ url: '/readyz' });
      expect(ready.json()).toEqual({ status: 'ready' });
      const terms = await instance.app.inject({ url: '/terms' });
      expect(terms.statusCode).toBe(200);
      expect(terms.body).toContain('The shared terms, ünïcode kept.');
      expect((await instance.app.inject({ url: '/privacy' })).body).toContain('The shared policy.');
    }

    // A file left on one instance's disk does not make it serve other terms than the rest.
    mkdirSync(path.join(two.dataDir, 'legal'), { recursive: true });
    writeFileSync(path.join(two.dataDir, 'legal', 'terms.md'), '# Terms\n\nAn old local copy.\n');
    expect((await two.app.inject({ url: '/terms' })).body).toContain('The shared terms');

    expect(await two.app.services.legal.remove('terms')).toBe(true);
    expect(await two.app.services.legal.remove('terms')).toBe(false);
    expect((await two.app.inject({ url: '/terms' })).body).toContain('An old local copy.');
    expect((await one.app.inject({ url: '/terms' })).statusCode).toBe(503);
    expect((await one.app.inject({ url: '/readyz' })).statusCode).toBe(503);
  });

  test('refuses an empty document, one over the size bound, and bytes that are not UTF-8, and keeps what was stored', async () => {
    await one.app.services.legal.set('privacy', Buffer.from('# Privacy\n\nKept.\n'));
    const refusal = async (bytes: Buffer) => one.app.services.legal.set('privacy', bytes).then(() => null, (error: unknown) => error);
    expect(await refusal(Buffer.from('  \n\n'))).toEqual(new LegalDocumentError('the file is empty'));
    expect(String(await refusal(Buffer.alloc(LEGAL_MAX_BYTES + 1, 'a')))).toContain(`at most ${LEGAL_MAX_BYTES}`);
    expect(await refusal(Buffer.from([0x23, 0x20, 0xff, 0xfe]))).toEqual(new LegalDocumentError('the file is not UTF-8 text'));
    expect((await two.app.inject({ url: '/privacy' })).body).toContain('Kept.');
  });
});

describe('vinhistory legal', () => {
  const data = makeDataDir();
  afterAll(() => data.remove());

  test('set stores a file in the database, status says where each document comes from, remove takes it out; bad input exits 2 with the reason', async () => {
    const file = data.file('terms.md', '# Terms\n\nFrom the command line.\n');
    const set = await runCliInProcess(['legal', 'set', 'terms', file], { dataDir: data.dir });
    expect(set.stderr).toBe('');
    expect(set.code).toBe(0);
    expect(set.stdout).toContain('Terms of Service stored');

    const status = await runCliInProcess(['legal', 'status', '--json'], { dataDir: data.dir });
    expect(status.code).toBe(0);
    const rows = JSON.parse(status.stdout) as { document: string; source: string }[];
    // Outside production, the privacy policy not provided falls back to the placeholder.
    expect(rows.map((row) => [row.document, row.source])).toEqual([
      ['terms', 'database'],
      ['privacy', 'placeholder'],
    ]);
    const { db, repos } = await openCliDatabase(data.dir);
    try {
      expect((await repos.legalDocuments.find('terms'))?.markdown).toBe('# Terms\n\nFrom the command line.\n');
    } finally {
      await db.close();
    }

    const unknown = await runCliInProcess(['legal', 'set', 'cookies', file], { dataDir: data.dir });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown document "cookies": use one of terms, privacy');
    const missing = await runCliInProcess(['legal', 'set', 'privacy', path.join(data.dir, 'nope.md')], { dataDir: data.dir });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('ENOENT');
    const empty = await runCliInProcess(['legal', 'set', 'privacy', data.file('empty.md', '\n')], { dataDir: data.dir });
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('the file is empty');

    expect((await runCliInProcess(['legal', 'remove', 'terms'], { dataDir: data.dir })).code).toBe(0);
    const again = await runCliInProcess(['legal', 'remove', 'terms'], { dataDir: data.dir });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('no Terms of Service is stored');
  });
});
