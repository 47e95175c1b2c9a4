import pino from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { MailDeliveryWorker, backoffDelayMs, describeError, sendAsQueued, type MailDeliveryTuning, type MailPreparers } from '../../../src/accounts/mail/mail-delivery-worker.ts';
import { MailQueue } from '../../../src/accounts/mail/mail-queue.ts';
import type { MailMessage, MailSender } from '../../../src/accounts/mail/mail-sender.ts';
import { passwordResetMail, withResetLink } from '../../../src/accounts/mail/messages.ts';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../../support/databases.ts';
import { memoryLog } from '../../support/memory-log.ts';

const SECRET = 'tHeLiNkSsEcReT';

/** A transport that records what it sends and fails while `failing` says so (quoting the link, as a careless one might). */
class FakeTransport implements MailSender {
  readonly kind = 'smtp';
  readonly sent: MailMessage[] = [];
  failing = false;
  delayMs = 0;
  async send(message: MailMessage): Promise<void> {
    if (this.delayMs) await new Promise((resolve) => setTimeout(resolve, this.delayMs));
    if (this.failing) throw Object.assign(new Error(`refused ${message.text.match(/https:\S+/)?.[0]} via smtp://user:pw@mail.example.com`), { code: 'EENVELOPE' });
    this.sent.push(message);
  }
  async close(): Promise<void> {}
}

const prepare: MailPreparers = {
  password_reset: async (mail) => ({
    kind: 'send',
    message: { to: mail.recipient, subject: mail.subject, text: withResetLink(mail.body, `https://vinhistory.test/reset-password?token=${SECRET}`) },
    secrets: [SECRET],
  }),
  billing: sendAsQueued,
  webhook_endpoint_disabled: sendAsQueued,
  feed_alert: sendAsQueued,
};

describe.each(DIALECTS)('the mail delivery worker (%s)', (dialect) => {
  let database: TestDatabase;
  let clock: number;
  const now = () => new Date(clock);
  beforeAll(async () => {
    database = await createTestDatabase(dialect);
  });
  afterAll(async () => {
    await database?.destroy();
  });
  beforeEach(async () => {
    clock = Date.parse('2026-06-01T10:00:00.000Z');
    await database.db.kysely.deleteFrom('mail_queue').execute();
  });

  function worker(transport: MailSender, tuning: Partial<MailDeliveryTuning> = {}, log = pino({ level: 'silent' }), preparers = prepare) {
    const queue = new MailQueue(database.repos.mailQueue);
    return {
      queue,
      worker: new MailDeliveryWorker({ repository: database.repos.mailQueue, queue, transport, prepare: preparers, log, now, tuning }),
    };
  }
  const reset = (to = `buyer-${Math.random().toString(36).slice(2, 8)}@example.com`) => passwordResetMail({ to, validMinutes: 60 });

  test('retries with backoff, then gives up after maxAttempts and logs it, keeping an error with no secret in it', async () => {
    const transport = new FakeTransport();
    transport.failing = true;
    const { lines, logger } = memoryLog();
    const { queue, worker: w } = worker(transport, { maxAttempts: 3 }, logger);
    const id = await queue.enqueue(reset(), now());
    expect(await w.drain()).toBe(1);
    let mail = await database.repos.mailQueue.find(id);
    expect(mail).toMatchObject({ status: 'queued', attempts: 1, nextAttemptAt: new Date(clock + backoffDelayMs(1)).toISOString() });
    expect(mail!.lastError).toBe('EENVELOPE: refused https://vinhistory.test/reset-password?token=[REDACTED] via smtp://[REDACTED]@mail.example.com');

    clock += backoffDelayMs(1) - 1;
    expect(await w.drain()).toBe(0);
    clock += 1;
    expect(await w.drain()).toBe(1);
    mail = await database.repos.mailQueue.find(id);
    expect(mail).toMatchObject({ status: 'queued', attempts: 2, nextAttemptAt: new Date(clock + backoffDelayMs(2)).toISOString() });
    clock += backoffDelayMs(2);
    expect(await w.drain()).toBe(1);
    expect(await database.repos.mailQueue.find(id)).toMatchObject({ status: 'failed', attempts: 3, failedAt: new Date(clock).toISOString() });
    clock += 24 * 60 * 60 * 1000;
    expect(await w.drain()).toBe(0);

    const given = lines.map((line) => JSON.parse(line) as { level: number; msg: string; mail?: string }).find((line) => line.msg.startsWith('mail given up'));
    expect(given).toMatchObject({ level: 50, msg: 'mail given up after 3 attempts', mail: id });
    expect(lines.join('\n')).not.toContain(SECRET);
    expect(transport.sent).toEqual([]);
  });

  test('the backoff doubles from 30 s and stops growing at an hour', () => {
    expect([1, 2, 3, 4, 8, 20].map(backoffDelayMs)).toEqual([30_000, 60_000, 120_000, 240_000, 3_600_000, 3_600_000]);
  });

  test('two workers draining one queue at once send every message exactly once', async () => {
    const transport = new FakeTransport();
    transport.delayMs = 5;
    const first = worker(transport, { batchSize: 3 });
    const second = worker(transport, { batchSize: 3 });
    const recipients = Array.from({ length: 20 }, (_, i) => `buyer-${i}@example.com`);
    for (const to of recipients) await first.queue.enqueue(reset(to), now());
    const [a, b] = await Promise.all([first.worker.drain(), second.worker.drain()]);
    expect(a + b).toBe(20);
    expect(transport.sent.map((message) => message.to).sort()).toEqual([...recipients].sort());
    expect(await database.repos.mailQueue.summary()).toMatchObject({ queued: 0, sent: 20 });
  });

  test('a message whose sender died during each of its attempts is given up, not sent again and again', async () => {
    const transport = new FakeTransport();
    const { queue, worker: w } = worker(transport, { maxAttempts: 2, leaseMs: 1000 });
    const id = await queue.enqueue(reset(), now());
    // Two claims that run out without an outcome, as two crashes mid-send leave them.
    await database.repos.mailQueue.claim(now(), 1000, 10);
    clock += 1000;
    await database.repos.mailQueue.claim(now(), 1000, 10);
    clock += 1000;
    expect(await w.drain()).toBe(1);
    expect(await database.repos.mailQueue.find(id)).toMatchObject({ status: 'failed', attempts: 3 });
    expect((await database.repos.mailQueue.find(id))!.lastError).toMatch(/no outcome after 2 attempts/);
    expect(transport.sent).toEqual([]);
  });

  test('nothing to send (no account) is settled as skipped; a failure to prepare is retried', async () => {
    let broken = true;
    const preparers: MailPreparers = {
      password_reset: async (mail) => {
        if (mail.recipient.startsWith('nobody')) return { kind: 'skip', reason: 'no account has this address' };
        if (broken) throw new Error('database unavailable');
        return prepare.password_reset(mail, now());
      },
      billing: sendAsQueued,
      webhook_endpoint_disabled: sendAsQueued,
      feed_alert: sendAsQueued,
    };
    const transport = new FakeTransport();
    const { queue, worker: w } = worker(transport, {}, pino({ level: 'silent' }), preparers);
    const skipped = await queue.enqueue(reset('nobody@example.com'), now());
    const retried = await queue.enqueue(reset('somebody@example.com'), now());
    expect(await w.drain()).toBe(2);
    expect(await database.repos.mailQueue.find(skipped)).toMatchObject({ status: 'skipped', lastError: 'no account has this address' });
    expect(await database.repos.mailQueue.find(retried)).toMatchObject({ status: 'queued', attempts: 1, lastError: 'database unavailable' });
    broken = false;
    clock += backoffDelayMs(1);
    expect(await w.drain()).toBe(1);
    expect(transport.sent.map((message) => message.to)).toEqual(['somebody@example.com']);
  });

  test('stop() lets the send under way finish and settle, then takes no more', async () => {
    const transport = new FakeTransport();
    transport.delayMs = 200;
    const { queue, worker: w } = worker(transport, { pollMs: 60_000 });
    w.start();
    const id = await queue.enqueue(reset(), now());
    // Let the worker, woken by the queue, claim it and begin the send.
    await new Promise((resolve) => setTimeout(resolve, 100));
    await w.stop();
    expect(transport.sent).toHaveLength(1);
    expect(await database.repos.mailQueue.find(id)).toMatchObject({ status: 'sent' });
    const later = await queue.enqueue(reset(), now());
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await database.repos.mailQueue.find(later)).toMatchObject({ status: 'queued', attempts: 0 });
  });
});

describe('describeError', () => {
  test('keeps the code and message, and takes out the secrets and URL credentials', () => {
    const error = Object.assign(new Error('Invalid login: 535 for smtps://me:hunter2@smtp.example.com, link ?token=abc'), { code: 'EAUTH' });
    expect(describeError(error, ['abc'])).toBe('EAUTH: Invalid login: 535 for smtps://[REDACTED]@smtp.example.com, link ?token=[REDACTED]');
    expect(describeError('plain', [])).toBe('plain');
  });
});
