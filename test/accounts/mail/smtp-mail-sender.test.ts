import { describe, expect, test } from 'vitest';
import { SmtpMailSender } from '../../../src/accounts/mail/smtp-mail-sender.ts';
import { TestSmtpServer, textOf } from '../../support/smtp-server.ts';

describe('the SMTP mail sender', () => {
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
