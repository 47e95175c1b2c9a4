import { performance } from 'node:perf_hooks';
import type { FastifyBaseLogger } from 'fastify';
import type { MailQueue } from '../accounts/mail/mail-queue.ts';
import type { ClaimedEvent, DeliveryAttempt } from '../domain/webhook.ts';
import type { Metrics } from '../observability/metrics.ts';
import { OutboundError, type OutboundClient } from '../outbound/outbound-client.ts';
import type { Repositories } from '../storage/repositories/index.ts';
import type { AttemptOutcome } from '../storage/repositories/webhook-outbox-repository.ts';
import { queueEndpointDisabledMail } from './endpoint-disabled-mail.ts';
import { DISABLE_AFTER_FAILING_MS, retryDelayMs } from './retry-schedule.ts';
import type { SecretKeeper } from './secret-keeper.ts';
import { EVENT_ID_HEADER, SIGNATURE_HEADER, signatureHeader } from './signing.ts';

/** A 2xx within this time delivers (contract). */
export const DELIVERY_TIMEOUT_MS = 10_000;
/** An answer's body is read up to this size; its first bytes are kept with the attempt. */
const MAX_ANSWER_BYTES = 256 * 1024;
const EXCERPT_CHARS = 500;

export interface WebhookSenderOptions {
  repos: Repositories;
  client: OutboundClient;
  secrets: SecretKeeper;
  /** The account mail queue: the endpoint-disabled mail goes through it like every account mail. */
  mail: MailQueue;
  metrics: Metrics;
  log: FastifyBaseLogger;
  /** Where the customer manages the endpoint, for the mail that says it was disabled. */
  accountUrl: string;
  now: () => Date;
  random?: () => number;
}

/** What one attempt at one event came to. */
export interface SendResult {
  attempt: DeliveryAttempt;
  outcome: AttemptOutcome;
}

/**
 * Sends one claimed event: signs its stored body with the endpoint's secret(s), POSTs it through
 * the outbound client (the address checked when connecting), and records the attempt with what
 * follows from it: delivered, a retry at the backoff's time, or given up after 72 hours. Repeated
 * failure for three days disables the endpoint and tells its owner.
 */
export class WebhookSender {
  constructor(private readonly options: WebhookSenderOptions) {}

  async send(event: ClaimedEvent, owner: string): Promise<SendResult> {
    const { repos, metrics } = this.options;
    const endpoint = await repos.webhookEndpoints.findForDelivery(event.accountId);
    const startedAt = this.options.now();
    let attempt: DeliveryAttempt;
    let delivered = false;
    if (!endpoint || !endpoint.enabled) {
      attempt = { attemptedAt: startedAt.toISOString(), url: endpoint?.url ?? '', statusCode: null, durationMs: 0, error: 'the endpoint is disabled or removed', responseExcerpt: null };
    } else {
      const secrets = [await this.options.secrets.open(endpoint.secretBox)];
      if (endpoint.previousSecretBox && endpoint.previousSecretUntil && endpoint.previousSecretUntil > startedAt.toISOString()) {
        secrets.push(await this.options.secrets.open(endpoint.previousSecretBox));
      }
      const timestamp = Math.floor(startedAt.getTime() / 1000);
      const clock = performance.now();
      try {
        const answer = await this.options.client.request(endpoint.url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'user-agent': 'vinhistory-webhooks/1',
            [EVENT_ID_HEADER]: event.id,
            [SIGNATURE_HEADER]: signatureHeader(secrets, timestamp, event.payload),
          },
          body: event.payload,
          timeoutMs: DELIVERY_TIMEOUT_MS,
          maxBytes: MAX_ANSWER_BYTES,
          // A redirect is not followed (a receiver that moved says so in its account): it fails.
          maxRedirects: 0,
        });
        delivered = answer.status >= 200 && answer.status < 300;
        attempt = {
          attemptedAt: startedAt.toISOString(),
          url: endpoint.url,
          statusCode: answer.status,
          durationMs: Math.round(performance.now() - clock),
          error: delivered ? null : `answered ${answer.status}`,
          responseExcerpt: excerpt(answer.body),
        };
      } catch (error) {
        if (!(error instanceof OutboundError)) throw error;
        attempt = {
          attemptedAt: startedAt.toISOString(),
          url: endpoint.url,
          statusCode: null,
          durationMs: Math.round(performance.now() - clock),
          error: `${error.failure}: ${error.message}`.slice(0, 300),
          responseExcerpt: null,
        };
      }
    }

    const outcome = await this.outcomeOf(event, delivered, endpoint !== undefined && endpoint.enabled);
    const applied = await repos.webhookOutbox.recordAttempt(event.id, owner, attempt, outcome);
    metrics.webhookDeliveries.inc({ outcome: outcome.kind });
    if (attempt.statusCode !== null || attempt.durationMs > 0) metrics.webhookDeliveryDuration.observe(attempt.durationMs / 1000);
    if (!applied) this.options.log.warn({ eventId: event.id }, 'webhook attempt recorded after its lease passed to another worker');
    if (outcome.kind === 'delivered') await repos.webhookEndpoints.recordSuccess(event.accountId);
    else if (endpoint?.enabled) await this.noteFailure(event.accountId, endpoint.url);
    return { attempt, outcome };
  }

  private async outcomeOf(event: ClaimedEvent, delivered: boolean, endpointEnabled: boolean): Promise<AttemptOutcome> {
    if (delivered) return { kind: 'delivered' };
    if (!endpointEnabled || event.type === 'ping') return { kind: 'failed' };
    const next = new Date(this.options.now().getTime() + retryDelayMs(event.attempts + 1, this.options.random));
    const giveUpAt = await this.options.repos.webhookOutbox.giveUpAt(event.id);
    return giveUpAt !== undefined && next.toISOString() >= giveUpAt ? { kind: 'failed' } : { kind: 'retry', at: next };
  }

  private async noteFailure(accountId: string, url: string): Promise<void> {
    const { repos } = this.options;
    const now = this.options.now();
    const failingSince = await repos.webhookEndpoints.recordFailure(accountId, now);
    if (failingSince === null || now.getTime() - Date.parse(failingSince) < DISABLE_AFTER_FAILING_MS) return;
    const disabled = await repos.webhookEndpoints.disable(accountId, `every delivery failed since ${failingSince}`, now);
    if (!disabled) return;
    this.options.log.warn({ accountId }, 'webhook endpoint disabled after three days of failures');
    const account = await repos.accounts.findById(accountId);
    if (!account) return;
    try {
      await queueEndpointDisabledMail(this.options.mail, { to: account.email, url, failingSince, accountUrl: this.options.accountUrl }, now);
    } catch (error) {
      this.options.log.error({ err: error, accountId }, 'could not queue the endpoint-disabled mail');
    }
  }
}

function excerpt(body: Buffer): string | null {
  if (body.length === 0) return null;
  return body.subarray(0, EXCERPT_CHARS * 4).toString('utf8').slice(0, EXCERPT_CHARS);
}
