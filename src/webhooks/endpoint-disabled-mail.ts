import type { MailMessage, MailSender } from '../accounts/mail/mail-sender.ts';

export function endpointDisabledMessage(input: { to: string; url: string; failingSince: string; accountUrl: string }): MailMessage {
  return {
    to: input.to,
    subject: 'Your vinhistory webhook endpoint has been disabled',
    text: [
      'Hello,',
      '',
      `Every delivery to your webhook endpoint has failed since ${input.failingSince}:`,
      '',
      `  ${input.url}`,
      '',
      'so we have stopped sending events to it, and the events that were still waiting are marked as failed.',
      'Your watches are kept. When the endpoint works again, save it again (in your account or with',
      'PUT /api/v1/webhook) to start receiving events; failed events can be sent again from the deliveries list:',
      '',
      input.accountUrl,
      '',
      'vinhistory',
      '',
    ].join('\n'),
  };
}

/**
 * The one place webhook code sends account mail: through the account mail service (MailSender),
 * whatever carries it (SMTP, the outbox folder, a durable queue).
 */
export async function sendEndpointDisabledMail(mailer: MailSender, input: Parameters<typeof endpointDisabledMessage>[0]): Promise<void> {
  await mailer.send(endpointDisabledMessage(input));
}
