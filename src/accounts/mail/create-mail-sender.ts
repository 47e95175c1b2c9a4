import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../../config.ts';
import type { MailSender } from './mail-sender.ts';
import { OutboxMailSender } from './outbox-mail-sender.ts';
import { SmtpMailSender } from './smtp-mail-sender.ts';

export function createMailSender(config: Config, log: FastifyBaseLogger): MailSender {
  // MAIL_TRANSPORT=smtp without SMTP_URL is refused by loadConfig; outbox wins over a set SMTP_URL.
  return config.mail.transport === 'smtp' && config.mail.smtpUrl ? new SmtpMailSender(config.mail.smtpUrl, config.mail.from) : new OutboxMailSender(config.dataDir, config.mail.from, log);
}
