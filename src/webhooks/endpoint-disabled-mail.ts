import type { MailQueue } from '../accounts/mail/mail-queue.ts';
import type { MailToQueue } from '../accounts/mail/messages.ts';

export function endpointDisabledMail(input: { to: string; url: string; failingSince: string; accountUrl: string }): MailToQueue {
  return {
    kind: 'webhook_endpoint_disabled',
    recipient: input.to,
    subject: 'Your vinhistory webhook endpoint has been disabled',
    body: [
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
 * The one place webhook code sends account mail: queued like every account mail (the mail worker
 * sends it, retrying, and it survives a restart or an SMTP outage). Nothing in it is a secret: the
 * endpoint's URL is the one stored with the endpoint.
 */
export async function queueEndpointDisabledMail(mail: MailQueue, input: Parameters<typeof endpointDisabledMail>[0], now: Date): Promise<void> {
  await mail.enqueue(endpointDisabledMail(input), now);
}
