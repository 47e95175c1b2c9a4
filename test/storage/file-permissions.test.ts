import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { OutboxMailSender } from '../../src/accounts/mail/outbox-mail-sender.ts';
import { migrateToLatest, openDatabase } from '../../src/storage/database.ts';

function modeOf(file: string): string {
  return (statSync(file).mode & 0o777).toString(8);
}

/**
 * The database holds password hashes and the cookie secret: no other user of the machine may read
 * it, whatever the umask of the process that made it. The most permissive umask shows that.
 */
describe('DATA_DIR and the SQLite files are private to the service user', () => {
  let base: string;
  let umask: number;
  beforeEach(() => {
    base = mkdtempSync(path.join(tmpdir(), 'vinhistory-perms-'));
    umask = process.umask(0o000);
  });
  afterEach(() => {
    process.umask(umask);
    rmSync(base, { recursive: true, force: true });
  });

  test('a new DATA_DIR is 0700; the database and its searches file, their -wal and -shm are 0600', async () => {
    const dataDir = path.join(base, 'data');
    const file = path.join(dataDir, 'vinhistory.sqlite');
    const db = await openDatabase({ kind: 'sqlite', file }, { backgroundCheckpoint: true });
    try {
      await migrateToLatest(db);
      expect(readdirSync(dataDir).sort()).toEqual([
        'vinhistory-searches.sqlite',
        'vinhistory-searches.sqlite-shm',
        'vinhistory-searches.sqlite-wal',
        'vinhistory.sqlite',
        'vinhistory.sqlite-shm',
        'vinhistory.sqlite-wal',
      ]);
      expect(modeOf(dataDir)).toBe('700');
      for (const name of readdirSync(dataDir)) expect([name, modeOf(path.join(dataDir, name))]).toEqual([name, '600']);
    } finally {
      await db.close();
    }
  });

  test('an existing database made world-readable (by an older version) is made private when opened', async () => {
    const dataDir = path.join(base, 'data');
    mkdirSync(dataDir, { mode: 0o755 });
    const file = path.join(dataDir, 'vinhistory.sqlite');
    const old = new BetterSqlite3(file);
    old.pragma('journal_mode = WAL');
    old.exec('create table t (x); insert into t values (1)');
    for (const name of readdirSync(dataDir)) chmodSync(path.join(dataDir, name), 0o644);
    const db = await openDatabase({ kind: 'sqlite', file });
    try {
      await migrateToLatest(db);
      for (const name of ['vinhistory.sqlite', 'vinhistory.sqlite-wal', 'vinhistory.sqlite-shm']) {
        expect([name, modeOf(path.join(dataDir, name))]).toEqual([name, '600']);
      }
    } finally {
      await db.close();
      old.close();
    }
  });

  test('the outbox folder is 0700 and its messages 0600, DATA_DIR made by it too', async () => {
    const dataDir = path.join(base, 'data');
    const sender = new OutboxMailSender(dataDir, 'vinhistory <no-reply@vinhistory.test>', pino({ level: 'silent' }));
    await sender.send({ to: 'buyer@example.com', subject: 'Reset your vinhistory password', text: 'secret link\n' });
    expect(modeOf(dataDir)).toBe('700');
    const outbox = path.join(dataDir, 'outbox');
    expect(modeOf(outbox)).toBe('700');
    const [message] = readdirSync(outbox);
    expect(modeOf(path.join(outbox, message!))).toBe('600');
  });

  test('an outbox folder left open by an older version is closed at the next message', async () => {
    const outbox = path.join(base, 'outbox');
    mkdirSync(outbox, { mode: 0o755 });
    const sender = new OutboxMailSender(base, 'vinhistory <no-reply@vinhistory.test>', pino({ level: 'silent' }));
    await sender.send({ to: 'buyer@example.com', subject: 'Reset your vinhistory password', text: 'secret link\n' });
    expect(modeOf(outbox)).toBe('700');
  });
});
