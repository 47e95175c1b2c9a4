import nodemailer, { type Transporter } from 'nodemailer';
import type { MailMessage, MailSender } from './mail-sender.ts';

/** Mail through the SMTP server of SMTP_URL (smtp:// with STARTTLS when offered, or smtps://). */
export class SmtpMailSender implements MailSender {
  readonly kind = 'smtp';
  private readonly transport: Transporter;

  constructor(
    smtpUrl: string,
    private readonly from: string,
  ) {
    this.transport = nodemailer.createTransport(smtpUrl);
  }

  async send(message: MailMessage): Promise<void> {
    await this.transport.sendMail({ from: this.from, to: message.to, subject: message.subject, text: message.text });
  }

  async close(): Promise<void> {
    this.transport.close();
  }
}
