import { readdirSync, readFileSync, rmSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { COOKIE_SECRET_SETTING } from '../../src/accounts/session-service.ts';
import { OutboxMailSender } from '../../src/accounts/mail/outbox-mail-sender.ts';
import { SmtpMailSender } from '../../src/accounts/mail/smtp-mail-sender.ts';
import { MemoryRateLimiter } from '../../src/limits/rate/memory-rate-limiter.ts';
import { buildAppOn, testConfig } from '../support/app.ts';
import { memoryLog } from '../support/memory-log.ts';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../support/databases.ts';
import { createAccountTestApp, randomEmail, resetLinkFor, TEST_SCRYPT, WebClient } from '../support/customer-app.ts';
import { TestSmtpServer, textOf } from '../support/smtp-server.ts';

describe.each(DIALECTS)('the cookie secret (%s)', (dialect) => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase(dialect);
  });
  afterAll(async () => {
    await database?.destroy();
  });

  test('without COOKIE_SECRET one is generated once, stored, and shared by every instance on the database', async () => {
    expect(await database.repos.settings.get(COOKIE_SECRET_SETTING)).toBeUndefined();
    // Several instances starting at once on an empty database agree on one secret.
    const values = await Promise.all(Array.from({ length: 5 }, (_, i) => database.repos.settings.getOrCreate('race-test', () => `value-${i}`)));
    expect(new Set(values).size).toBe(1);

    const first = await createAccountTestApp(dialect, { database });
    const second = await createAccountTestApp(dialect, { database });
    try {
      const secret = await database.repos.settings.get(COOKIE_SECRET_SETTING);
      expect(secret).toMatch(/^[\w-]{43}$/);
      // A browser logged in through one instance is logged in on the other.
      const browser = new WebClient(first.app);
      const email = randomEmail();
      await browser.signUp(email);
      const res = await second.app.inject({ url: '/account', headers: { cookie: browser.cookieHeader() } });
      expect(res.statusCode).toBe(200);
      expect(res.body).toContain(email);
      expect(await database.repos.settings.get(COOKIE_SECRET_SETTING)).toBe(secret);
    } finally {
      await first.close();
      await second.close();
    }
  });

  test('COOKIE_SECRET, when given, signs the cookies: an instance with another secret does not accept them', async () => {
    const secretA = 'a'.repeat(40);
    const one = await createAccountTestApp(dialect, { database, env: { COOKIE_SECRET: secretA } });
    const same = await createAccountTestApp(dialect, { database, env: { COOKIE_SECRET: secretA } });
    const other = await createAccountTestApp(dialect, { database, env: { COOKIE_SECRET: 'b'.repeat(40) } });
    try {
      const browser = new WebClient(one.app);
      await browser.signUp(randomEmail());
      const cookie = browser.cookieHeader();
      expect((await same.app.inject({ url: '/account', headers: { cookie } })).statusCode).toBe(200);
      expect((await other.app.inject({ url: '/account', headers: { cookie } })).statusCode).toBe(303);
    } finally {
      await Promise.all([one.close(), same.close(), other.close()]);
    }
  });
});

describe('account mail', () => {
  test('without SMTP the message goes whole to DATA_DIR/outbox, and the log says only where', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'vinhistory-outbox-'));
    const { lines, logger } = memoryLog();
    try {
      const sender = new OutboxMailSender(dataDir, 'vinhistory <no-reply@vinhistory.test>', logger, () => new Date('2026-05-06T07:08:09.010Z'));
      await sender.send({ to: 'Buyer+1@Example.com', subject: 'Reset your vinhistory password', text: 'Open https://vinhistory.test/reset-password?token=SECRET123\n' });
      const files = readdirSync(path.join(dataDir, 'outbox'));
      expect(files).toHaveLength(1);
      expect(files[0]).toMatch(/^2026-05-06T07-08-09-010Z-[0-9a-z]+-Buyer\+1@Example\.com\.txt$/);
      expect(readFileSync(path.join(dataDir, 'outbox', files[0]!), 'utf8')).toBe(
        'From: vinhistory <no-reply@vinhistory.test>\nTo: Buyer+1@Example.com\nDate: Wed, 06 May 2026 07:08:09 GMT\nSubject: Reset your vinhistory password\n\nOpen https://vinhistory.test/reset-password?token=SECRET123\n',
      );
      const log = lines.join('\n');
      expect(log).toContain('mail written to the outbox');
      expect(log).toContain(files[0]);
      expect(log).not.toContain('SECRET123');
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test('the whole reset flow leaves no reset token, password or session id in the request log', async () => {
    const database = await createTestDatabase('sqlite');
    const dataDir = mkdtempSync(path.join(tmpdir(), 'vinhistory-log-'));
    const { lines, logger } = memoryLog();
    const app = await buildAppOn({
      config: testConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'info' }),
      db: database.db,
      rateLimiter: new MemoryRateLimiter(),
      loggerInstance: logger,
      overrides: { passwordCost: TEST_SCRYPT },
    });
    try {
      const email = randomEmail();
      const browser = new WebClient(app);
      await browser.signUp(email, 'first secret passphrase');
      await browser.get('/forgot-password');
      await browser.post('/forgot-password', { email });
      await app.services.mailDelivery.drain();
      const messages = readdirSync(path.join(dataDir, 'outbox')).map((file) => readFileSync(path.join(dataDir, 'outbox', file), 'utf8'));
      const link = new URL(resetLinkFor(messages, email));
      const token = link.searchParams.get('token')!;
      await browser.get(link.pathname + link.search);
      await browser.post('/reset-password', { token, password: 'second secret passphrase' });
      expect((await browser.get('/account')).statusCode).toBe(200);
      const log = lines.join('\n');
      expect(log).toContain('incoming request');
      for (const secret of [token, 'first secret passphrase', 'second secret passphrase', browser.cookies.get('vh_session')!.split('.')[0]!]) {
        expect(log).not.toContain(secret);
      }
    } finally {
      await app.close();
      await database.destroy();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test('with SMTP_URL the message is sent through the SMTP server', async () => {
    const server = await TestSmtpServer.start();
    const sender = new SmtpMailSender(server.url, 'vinhistory <no-reply@vinhistory.test>');
    try {
      await sender.send({ to: 'buyer@example.com', subject: 'Reset your vinhistory password', text: 'Hello over SMTP.\n' });
      const [message] = server.received;
      expect(message!.to).toBe('buyer@example.com');
      expect(message!.data).toMatch(/^To: buyer@example\.com$/m);
      expect(message!.data).toMatch(/^Subject: Reset your vinhistory password$/m);
      expect(textOf(message!)).toContain('Hello over SMTP.');
    } finally {
      await sender.close();
      await server.close();
    }
  });

  test('a stalled SMTP server fails the send within the timeouts instead of holding it', async () => {
    const server = await TestSmtpServer.start('stall');
    const sender = new SmtpMailSender(server.url, 'vinhistory <no-reply@vinhistory.test>', { greetingTimeout: 200 });
    try {
      await expect(sender.send({ to: 'buyer@example.com', subject: 'x', text: 'y' })).rejects.toMatchObject({ code: 'ETIMEDOUT' });
      expect(server.connections).toBe(1);
    } finally {
      await sender.close();
      await server.close();
    }
  });
});
