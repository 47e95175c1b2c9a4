import type { Lot } from './lot.ts';

export type LotEventType = 'lot.created' | 'lot.updated';
export type WebhookEventType = LotEventType | 'ping';

/**
 * The fields of a lot a `lot.updated` event can name in `changed`: every field of the Lot but its
 * identity (auction and lot id never change; a lot's VIN is its vehicle's).
 */
export type ChangedField = Exclude<keyof Lot, 'auction' | 'lot_id'>;

/** The JSON body POSTed to the endpoint, byte for byte what is signed. */
export interface LotEventBody {
  id: string;
  type: LotEventType;
  created_at: string;
  /**
   * `previous`: each changed field's value before the change, by field name (`{"price": 4000}`);
   * `{}` for `lot.created`.
   */
  data: { vin: string; lot: Lot; changed: ChangedField[]; previous: Partial<Record<ChangedField, unknown>> };
}

export interface PingEventBody {
  id: string;
  type: 'ping';
  created_at: string;
  data: { message: string };
}

export type WebhookEventBody = LotEventBody | PingEventBody;

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

/** One try at delivering an event. */
export interface DeliveryAttempt {
  attemptedAt: string;
  url: string;
  /** The HTTP status answered, or null when no answer came (refused, timeout, network). */
  statusCode: number | null;
  durationMs: number;
  /** Why no answer came, or why it did not count: 'timeout', 'refused: ...', ... */
  error: string | null;
  /** The first bytes of the answer's body, as text. */
  responseExcerpt: string | null;
}

/** An event for one account and its delivery so far. */
export interface Delivery {
  eventId: string;
  type: WebhookEventType;
  createdAt: string;
  status: DeliveryStatus;
  attempts: DeliveryAttempt[];
  nextAttemptAt: string | null;
  /** The exact body sent, as JSON text. */
  payload: string;
}

/** An account's endpoint as the account sees it: never its secret. */
export interface WebhookEndpoint {
  accountId: string;
  url: string;
  /** `whsec_` and a few characters: enough to tell two secrets apart, useless to sign. */
  secretHint: string;
  /** Until when the previous secret still signs, after a rotation; null outside a grace period. */
  previousSecretUntil: string | null;
  enabled: boolean;
  failingSince: string | null;
  disabledAt: string | null;
  disabledReason: string | null;
  createdAt: string;
  updatedAt: string;
}

/** An endpoint as the delivery worker needs it: the sealed secrets it must open to sign. */
export interface EndpointForDelivery {
  url: string;
  enabled: boolean;
  secretBox: string;
  /** Set while the previous secret's grace period lasts. */
  previousSecretBox: string | null;
  previousSecretUntil: string | null;
  failingSince: string | null;
}

/** An event a worker holds the lease of, ready to send. */
export interface ClaimedEvent {
  id: string;
  accountId: string;
  type: WebhookEventType;
  payload: string;
  createdAt: string;
  attempts: number;
}
