/** One plain-text message. Account mail is short and transactional; no HTML part is needed. */
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

/** Sends account mail (password resets). SMTP when configured, else the outbox folder. */
export interface MailSender {
  readonly kind: 'smtp' | 'outbox';
  send(message: MailMessage): Promise<void>;
  close(): Promise<void>;
}
