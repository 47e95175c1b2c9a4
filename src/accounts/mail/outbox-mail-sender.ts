import { chmod, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import type { MailMessage, MailSender } from './mail-sender.ts';

/**
 * Without SMTP, each message is written whole to DATA_DIR/outbox/<time>-<to>.txt, where an operator
 * (or a test) reads it. The log says only that a message was written and where: a reset link is a
 * secret and must not reach a log line.
 */
export class OutboxMailSender implements MailSender {
  readonly kind = 'outbox';
  readonly folder: string;

  constructor(
    dataDir: string,
    private readonly from: string,
    private readonly log: FastifyBaseLogger,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.folder = path.join(dataDir, 'outbox');
  }

  async send(message: MailMessage): Promise<void> {
    // Messages hold reset links: only the service's user may list or read them, whatever the
    // umask, and also when an older version made the folder.
    const created = await mkdir(this.folder, { recursive: true, mode: 0o700 });
    if (created !== undefined && created !== this.folder) await chmod(path.dirname(this.folder), 0o700);
    await chmod(this.folder, 0o700);
    const date = this.now();
    const stamp = date.toISOString().replace(/[:.]/g, '-');
    // The address is in the name to find a message by eye; anything odd in it is replaced so that
    // it cannot leave the folder or make an awkward file name.
    const safeTo = message.to.replace(/[^a-zA-Z0-9@._+-]/g, '_').slice(0, 100);
    const file = path.join(this.folder, `${stamp}-${Math.random().toString(36).slice(2, 6)}-${safeTo}.txt`);
    const body = [`From: ${this.from}`, `To: ${message.to}`, `Date: ${date.toUTCString()}`, `Subject: ${message.subject}`, '', message.text].join('\n');
    await writeFile(file, body, { mode: 0o600, flag: 'wx' });
    this.log.info({ file, subject: message.subject }, 'mail written to the outbox (SMTP_URL is not set)');
  }

  async close(): Promise<void> {}
}
