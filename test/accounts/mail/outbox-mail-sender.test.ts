import { readdirSync, readFileSync, rmSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { OutboxMailSender } from '../../../src/accounts/mail/outbox-mail-sender.ts';
import { memoryLog } from '../../support/memory-log.ts';

describe('the outbox mail sender', () => {
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
});
