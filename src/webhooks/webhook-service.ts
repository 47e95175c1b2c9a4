import type { Delivery, PingEventBody, WebhookEndpoint } from '../domain/webhook.ts';
import { newId } from '../domain/ids.ts';
import { decodeCursor, type Page } from '../domain/watch.ts';
import { checkOutboundName, checkOutboundUrl, type OutboundPolicy } from '../outbound/outbound-policy.ts';
import type { Repositories } from '../storage/repositories/index.ts';
import { accountSubject, Throttle, type ThrottleRule } from '../accounts/throttle.ts';
import type { DeliveryWorker } from './delivery-worker.ts';
import type { SecretKeeper } from './secret-keeper.ts';
import { newWebhookSecret, secretHint } from './signing.ts';
import { giveUpAtFor } from './retry-schedule.ts';

/** After a rotation, the previous secret keeps signing (beside the new one) this long. */
export const SECRET_ROTATION_GRACE_MS = 24 * 60 * 60 * 1000;
export const MAX_ENDPOINT_URL_CHARS = 2048;
export const MAX_DELIVERIES_PAGE = 100;
/**
 * Test pings: 5 per account a minute, counted in the database so that every instance shares the
 * count. Each is an outbound POST to a URL the caller chose and a stored event: a person checking
 * an endpoint sends a few; a loop must not use the service to post at someone.
 */
export const PINGS_PER_ACCOUNT: ThrottleRule = { kind: 'webhook_ping', limit: 5, windowMs: 60 * 1000 };

export type SetEndpointOutcome =
  | { kind: 'invalid-url'; reason: string }
  /** The account's first endpoint, or a rotation: `secret` is shown once and never again. */
  | { kind: 'created'; endpoint: WebhookEndpoint; secret: string }
  | { kind: 'updated'; endpoint: WebhookEndpoint; secret: string | null };

export type TestOutcome = { kind: 'no-endpoint' } | { kind: 'disabled' } | { kind: 'throttled'; retryAfterMs: number } | { kind: 'sent'; delivery: Delivery };

export type DeliveriesOutcome = { kind: 'bad-cursor' } | { kind: 'page'; page: Page<Delivery> };

/**
 * The account's webhook endpoint and its deliveries: set the URL (the secret shown once, rotated
 * with a grace period during which both sign), send a ping, list each event with each attempt,
 * send an event again.
 */
export class WebhookService {
  private readonly throttle: Throttle;

  constructor(
    private readonly options: {
      repos: Repositories;
      secrets: SecretKeeper;
      worker: DeliveryWorker;
      policy: OutboundPolicy;
      now: () => Date;
      /** Production: a URL whose name resolves to a refused address is refused when it is set. */
      checkNamesWhenSet?: boolean;
    },
  ) {
    this.throttle = new Throttle(options.repos.authAttempts);
  }

  getEndpoint(accountId: string): Promise<WebhookEndpoint | undefined> {
    return this.options.repos.webhookEndpoints.find(accountId);
  }

  /**
   * Sets where the account's events go. The URL is checked as every delivery will check it
   * (https, no credentials, a public literal address); the name's address is checked again at
   * each connection. A new endpoint gets a secret; `rotateSecret` replaces it, the old one
   * signing too for SECRET_ROTATION_GRACE_MS. Saving enables a disabled endpoint again.
   */
  async setEndpoint(accountId: string, url: string, options: { rotateSecret?: boolean } = {}): Promise<SetEndpointOutcome> {
    const { repos, secrets } = this.options;
    const trimmed = url.trim();
    if (trimmed.length > MAX_ENDPOINT_URL_CHARS) return { kind: 'invalid-url', reason: `at most ${MAX_ENDPOINT_URL_CHARS} characters` };
    const check = checkOutboundUrl(trimmed, this.options.policy);
    if (!check.ok) return { kind: 'invalid-url', reason: check.reason };
    if (this.options.checkNamesWhenSet) {
      const named = await checkOutboundName(check.url, this.options.policy);
      if (!named.ok) return { kind: 'invalid-url', reason: named.reason };
    }
    const now = this.options.now();
    const secret = newWebhookSecret();
    const sealed = { box: await secrets.seal(secret), hint: secretHint(secret) };
    if (await repos.webhookEndpoints.create(accountId, check.url.toString(), sealed, now)) {
      return { kind: 'created', endpoint: (await repos.webhookEndpoints.find(accountId))!, secret };
    }
    const rotation = options.rotateSecret ? { secret: sealed, previousUntil: new Date(now.getTime() + SECRET_ROTATION_GRACE_MS) } : null;
    await repos.webhookEndpoints.update(accountId, check.url.toString(), rotation, now);
    return { kind: 'updated', endpoint: (await repos.webhookEndpoints.find(accountId))!, secret: rotation ? secret : null };
  }

  /** Queues a `ping` and sends it at once; answers the event with its attempt. Not retried. */
  async sendTest(accountId: string): Promise<TestOutcome> {
    const { repos } = this.options;
    const endpoint = await repos.webhookEndpoints.find(accountId);
    if (!endpoint) return { kind: 'no-endpoint' };
    if (!endpoint.enabled) return { kind: 'disabled' };
    const now = this.options.now();
    // After the endpoint checks, so that a ping that could not be sent takes no place.
    const place = await this.throttle.reserve([{ rule: PINGS_PER_ACCOUNT, subject: accountSubject(accountId) }], now);
    if (place.kind === 'throttled') return { kind: 'throttled', retryAfterMs: place.retryAfterMs };
    const id = newId('evt');
    const body: PingEventBody = { id, type: 'ping', created_at: now.toISOString(), data: { message: 'A test event from vinhistory: your endpoint is reachable.' } };
    await repos.webhookOutbox.insertEvents([{ id, accountId, type: 'ping', payload: JSON.stringify(body), at: now.toISOString(), giveUpAt: giveUpAtFor(now) }]);
    await this.options.worker.sendNow(id);
    const page = await repos.webhookOutbox.listDeliveries(accountId, { limit: 1, eventId: id });
    return { kind: 'sent', delivery: page.items[0]! };
  }

  async listDeliveries(accountId: string, options: { limit: number; cursor?: string | undefined }): Promise<DeliveriesOutcome> {
    const after = options.cursor === undefined ? null : decodeCursor(options.cursor);
    if (options.cursor !== undefined && after === null) return { kind: 'bad-cursor' };
    const limit = Math.min(Math.max(1, options.limit), MAX_DELIVERIES_PAGE);
    return { kind: 'page', page: await this.options.repos.webhookOutbox.listDeliveries(accountId, { limit, after }) };
  }

  /** Sends a delivered or failed event again (a "resend"): queued now, retried for 72 hours. */
  async resend(accountId: string, eventId: string): Promise<boolean> {
    const now = this.options.now();
    const queued = await this.options.repos.webhookOutbox.resend(accountId, eventId, now, new Date(giveUpAtFor(now)));
    if (queued) this.options.worker.wake();
    return queued;
  }
}
