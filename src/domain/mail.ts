/**
 * What a queued message is for. It decides what the delivery worker adds at send time: a
 * password reset's link is made then, so that the queue never holds a secret; a billing mail
 * (an invoice, a receipt, a quota warning, a plan's end) is sent as it was queued.
 */
export type MailKind = 'password_reset' | 'billing' | 'webhook_endpoint_disabled' | 'feed_alert';

/** queued: waiting or retrying; sent; skipped: nothing to send at send time (no such account); failed: given up. */
export type MailStatus = 'queued' | 'sent' | 'skipped' | 'failed';

/** A message of the mail queue, as the delivery worker and the operator see it. */
export interface QueuedMail {
  id: string;
  kind: MailKind;
  recipient: string;
  subject: string;
  /** The text, without any secret (see MailKind). */
  body: string;
  /** The HTML alternative of the text, when the message has one. */
  html: string | null;
  status: MailStatus;
  /** Delivery attempts begun, this one included for a claimed message. */
  attempts: number;
  createdAt: string;
  nextAttemptAt: string;
  sentAt: string | null;
  failedAt: string | null;
  lastError: string | null;
}

/** A message claimed by one delivery worker: only the holder of `claimId` may settle it. */
export interface ClaimedMail extends QueuedMail {
  claimId: string;
  leaseUntil: string;
}

/** The queue at a glance, for the operator. */
export interface MailQueueSummary {
  queued: number;
  /** Queued messages whose last attempt failed (with an error kept) and that wait for their next one. */
  retrying: number;
  sent: number;
  skipped: number;
  failed: number;
  /** When the oldest message still queued was queued (null: none). */
  oldestQueuedAt: string | null;
}
