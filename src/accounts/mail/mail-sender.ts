/** One message: plain text, and for billing mail an HTML alternative of the same words. */
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html?: string;
}

/**
 * The delivery worker's transport for account mail: SMTP when configured, else the outbox folder.
 * Only the worker sends; requests queue (mail-queue.ts).
 */
export interface MailSender {
  readonly kind: 'smtp' | 'outbox';
  send(message: MailMessage): Promise<void>;
  close(): Promise<void>;
}
