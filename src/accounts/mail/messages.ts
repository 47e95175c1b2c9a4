import type { MailMessage } from './mail-sender.ts';

export function passwordResetMessage(input: { to: string; link: string; validMinutes: number }): MailMessage {
  return {
    to: input.to,
    subject: 'Reset your vinhistory password',
    text: [
      'Hello,',
      '',
      'Someone (we hope you) asked to set a new password for the vinhistory account of this address.',
      'Open this link to choose one:',
      '',
      input.link,
      '',
      `The link works once, for ${input.validMinutes} minutes. If you did not ask for it, ignore this message:`,
      'your password stays as it is.',
      '',
      'vinhistory',
      '',
    ].join('\n'),
  };
}
