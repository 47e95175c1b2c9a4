import nodemailer, { type Transporter } from 'nodemailer';
import SMTPTransport from 'nodemailer/lib/smtp-transport/index.js';
import type { MailMessage, MailSender } from './mail-sender.ts';

/**
 * Every wait of one send is bounded, well within the delivery worker's lease (MAIL_LEASE_MS): a
 * server that stalls fails the attempt, which is retried later, instead of holding the message
 * past its claim (when another instance could take it and send it twice). Nodemailer's own
 * defaults wait up to 10 minutes for an idle socket.
 */
export const SMTP_TIMEOUTS: SmtpTimeouts = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 };

/** Milliseconds to connect, to wait for the greeting, and of silence on the socket. */
export interface SmtpTimeouts {
  connectionTimeout: number;
  greetingTimeout: number;
  socketTimeout: number;
}

/** Mail through the SMTP server of SMTP_URL (smtp:// with STARTTLS when offered, or smtps://). */
export class SmtpMailSender implements MailSender {
  readonly kind = 'smtp';
  private readonly transport: Transporter;

  constructor(
    smtpUrl: string,
    private readonly from: string,
    timeouts: Partial<SmtpTimeouts> = {},
  ) {
    // Built as a transport object: createTransport({ url }) would drop every option beside the URL.
    this.transport = nodemailer.createTransport(new SMTPTransport({ url: smtpUrl, ...SMTP_TIMEOUTS, ...timeouts }));
  }

  async send(message: MailMessage): Promise<void> {
    await this.transport.sendMail({ from: this.from, to: message.to, subject: message.subject, text: message.text, ...(message.html ? { html: message.html } : {}) });
  }

  async close(): Promise<void> {
    this.transport.close();
  }
}
