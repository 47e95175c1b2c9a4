import type { MailToQueue } from '../accounts/mail/messages.ts';
import { displayUrl, type Feed } from '../domain/feed.ts';

/** Failed pulls in a row after which the operator is told, once (and again when the feed recovers). */
export const FAILURES_BEFORE_ALERT = 3;

export function feedFailingMail(to: string, feed: Feed, failures: number, error: string): MailToQueue {
  return {
    kind: 'feed_alert',
    recipient: to,
    subject: `vinhistory feed "${feed.name}" is failing`,
    body: [
      `The feed "${feed.name}" has failed ${failures} pulls in a row.`,
      '',
      `  URL:          ${displayUrl(feed.url)}`,
      `  Last error:   ${error}`,
      `  Last success: ${feed.lastSuccessAt ?? 'never'}`,
      '',
      'The lots it stored before are kept as they were; nothing of the failed pulls replaced them.',
      'It is pulled again on its schedule; you will get one more message when a pull succeeds again.',
      'What each failure means and what to do: docs/feeds.md, "When a pull fails".',
      '',
      '  vinhistory feeds list',
      `  vinhistory feeds run ${feed.name}`,
      '',
    ].join('\n'),
  };
}

export function feedRecoveredMail(to: string, feed: Feed, at: string): MailToQueue {
  return {
    kind: 'feed_alert',
    recipient: to,
    subject: `vinhistory feed "${feed.name}" has recovered`,
    body: [
      `The feed "${feed.name}" was pulled successfully again at ${at}, after ${feed.failuresInRow} failed pulls.`,
      '',
      `  URL: ${displayUrl(feed.url)}`,
      '',
    ].join('\n'),
  };
}
