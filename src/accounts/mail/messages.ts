import type { MailKind } from '../../domain/mail.ts';

/**
 * Where a reset message's link goes. The queued body holds this slot, never the link: the link is
 * a secret, made and put in by the delivery worker at send time (docs/decisions.md).
 */
export const RESET_LINK_SLOT = '{{reset_link}}';

/** A message as it is queued: what to send, to whom, with no secret in it. */
export interface MailToQueue {
  kind: MailKind;
  recipient: string;
  subject: string;
  body: string;
  /** The HTML alternative of `body` (billing mail); none for a plain-text message. */
  html?: string;
}

export function passwordResetMail(input: { to: string; validMinutes: number }): MailToQueue {
  return {
    kind: 'password_reset',
    recipient: input.to,
    subject: 'Reset your vinhistory password',
    body: [
      'Hello,',
      '',
      'Someone (we hope you) asked to set a new password for the vinhistory account of this address.',
      'Open this link to choose one:',
      '',
      RESET_LINK_SLOT,
      '',
      `The link works once, for ${input.validMinutes} minutes. If you did not ask for it, ignore this message:`,
      'your password stays as it is.',
      '',
      'vinhistory',
      '',
    ].join('\n'),
  };
}

/** The body with its link in place (every slot, though a reset body has one). */
export function withResetLink(body: string, link: string): string {
  return body.split(RESET_LINK_SLOT).join(link);
}
