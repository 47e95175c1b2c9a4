import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { DIALECTS } from '../../support/databases.ts';
import { createAccountTestApp, randomEmail, WebClient, type AccountTestApp } from '../../support/customer-app.ts';
import { TestSmtpServer, textOf } from '../../support/smtp-server.ts';

const RETRY_MS = 60_000;

/** The page without what legitimately differs between two requests: the address echoed, the CSRF token. */
const strip = (html: string) => html.replace(/<strong>[^<]*<\/strong>/, '').replace(/value="[^"]*"/g, '');

/**
 * The reset form queues its mail and answers; the mail worker sends it afterwards. The answer is
 * the same, and as quick, whether the address has an account, whatever the SMTP server does
 * (issue 11, L4).
 */
describe.each(DIALECTS)('password reset mail over SMTP (%s)', (dialect) => {
  let smtp: TestSmtpServer;
  let t: AccountTestApp;
  // The mail worker's clock: a test moves it past a retry's wait instead of sleeping.
  let offsetMs = 0;
  const now = () => new Date(Date.now() + offsetMs);

  beforeAll(async () => {
    smtp = await TestSmtpServer.start();
    t = await createAccountTestApp(dialect, {
      env: { SMTP_URL: smtp.url },
      now,
      overrides: { mailDelivery: { retryDelayMs: () => RETRY_MS, pollMs: 50, maxAttempts: 3 } },
    });
  });
  afterAll(async () => {
    await t?.close();
    await smtp?.close();
  });
  afterEach(async () => {
    await t.app.services.mailDelivery.stop();
    smtp.mode = 'accept';
    smtp.dropConnections();
    // Whatever a test left queued does not reach the next one.
    await t.db.kysely.deleteFrom('mail_queue').execute();
    smtp.received.length = 0;
    smtp.connections = 0;
  });

  async function requestReset(browser: WebClient, email: string) {
    await browser.get('/forgot-password');
    return browser.post('/forgot-password', { email });
  }

  async function queued() {
    return t.db.kysely.selectFrom('mail_queue').selectAll().orderBy('created_at').execute();
  }

  test('with the SMTP server down, a known and an unknown address get the same 200 page, and no send was tried before it', async () => {
    smtp.mode = 'down';
    const known = randomEmail();
    await new WebClient(t.app).signUp(known);
    const browser = new WebClient(t.app);
    const forKnown = await requestReset(browser, known);
    const forUnknown = await requestReset(browser, randomEmail());
    // Before the mail queue the known address was answered 500 here (the SMTP send failed in the request).
    expect(forKnown.statusCode).toBe(200);
    expect(forUnknown.statusCode).toBe(200);
    expect(strip(forKnown.body)).toBe(strip(forUnknown.body));
    expect(forKnown.body).toContain('Check your inbox');
    expect(smtp.connections).toBe(0);
    const rows = await queued();
    expect(rows.map((row) => [row.kind, row.status, row.attempts])).toEqual([
      ['password_reset', 'queued', 0],
      ['password_reset', 'queued', 0],
    ]);
    // The queue holds no secret: the link is made at send time.
    for (const row of rows) expect(row.body).not.toMatch(/token=/);
  });

  test('a message that fails while SMTP is down is retried after its wait and sent once SMTP is back; the link works', async () => {
    smtp.mode = 'down';
    const email = randomEmail();
    await new WebClient(t.app).signUp(email);
    const browser = new WebClient(t.app);
    await requestReset(browser, email);
    await requestReset(browser, randomEmail());

    expect(await t.app.services.mailDelivery.drain()).toBe(2);
    const [forKnown, forUnknown] = await queued();
    expect(forKnown).toMatchObject({ status: 'queued', attempts: 1 });
    expect(forKnown!.last_error).toMatch(/ECONNRESET|closed|socket/i);
    expect(forKnown!.last_error).not.toMatch(/token/);
    expect(Date.parse(forKnown!.next_attempt_at) - now().getTime()).toBeGreaterThan(RETRY_MS - 5000);
    // The address with no account gets no mail, and no attempt at one.
    expect(forUnknown).toMatchObject({ status: 'skipped', last_error: 'no account has this address' });
    expect(await t.app.services.mail.summary()).toMatchObject({ queued: 1, retrying: 1, skipped: 1 });

    smtp.mode = 'accept';
    expect(await t.app.services.mailDelivery.drain()).toBe(0);
    expect(smtp.received).toHaveLength(0);
    offsetMs += RETRY_MS;
    expect(await t.app.services.mailDelivery.drain()).toBe(1);
    expect(smtp.received.map((mail) => mail.to)).toEqual([email]);
    expect((await queued())[0]).toMatchObject({ status: 'sent', attempts: 2 });

    const link = new URL(/https:\/\/vinhistory\.test\/reset-password\?token=\S+/.exec(textOf(smtp.received[0]!))![0]);
    const form = await browser.get(link.pathname + link.search);
    expect(form.statusCode).toBe(200);
    expect(form.body).toContain(email);
  });

  test('a stalled SMTP server holds neither the answer nor, once it recovers, the mail', async () => {
    smtp.mode = 'stall';
    const email = randomEmail();
    await new WebClient(t.app).signUp(email);
    t.app.services.mailDelivery.start();
    const res = await requestReset(new WebClient(t.app), email);
    expect(res.statusCode).toBe(200);
    // Answered while the message is still waiting for the server's greeting.
    expect((await queued())[0]).toMatchObject({ status: 'queued', sent_at: null });
    expect(smtp.received).toHaveLength(0);

    // The server comes back: the hung attempt fails, its retry is due, and the running worker sends it.
    smtp.mode = 'accept';
    smtp.dropConnections();
    offsetMs += RETRY_MS;
    await smtp.waitForMessages(1);
    expect(smtp.received[0]!.to).toBe(email);
  });

  test('the running worker sends a queued message at once, not at its next poll', async () => {
    await t.app.services.mailDelivery.stop();
    const slow = await createAccountTestApp(dialect, {
      env: { SMTP_URL: smtp.url },
      database: { db: t.db, repos: t.repos, destroy: async () => {} },
      overrides: { mailDelivery: { pollMs: 10 * 60 * 1000 } },
    });
    try {
      const email = randomEmail();
      await new WebClient(slow.app).signUp(email);
      slow.app.services.mailDelivery.start();
      // Its first pass finds nothing (given the time to run); the next poll is ten minutes away.
      await new Promise((resolve) => setTimeout(resolve, 300));
      await requestReset(new WebClient(slow.app), email);
      await smtp.waitForMessages(1);
      expect(smtp.received[0]!.to).toBe(email);
    } finally {
      await slow.close();
    }
  });
});
