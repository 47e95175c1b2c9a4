/** One plain-text message. Account mail is short and transactional; no HTML part is needed. */
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
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
