import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Delivery } from '../../domain/webhook.ts';
import { formatDateTime } from '../format.ts';
import { accountOf } from './current-account.ts';

const Form = Type.Record(Type.String(), Type.Unknown());
const PageQuery = Type.Object({ cursor: Type.Optional(Type.String({ maxLength: 200 })), done: Type.Optional(Type.String({ maxLength: 40 })) });
const NOTICES: Record<string, string> = { resent: 'The event is queued again; it is sent within moments.' };

function deliveryView(delivery: Delivery) {
  return {
    eventId: delivery.eventId,
    type: delivery.type,
    created: formatDateTime(delivery.createdAt),
    status: delivery.status,
    next: delivery.nextAttemptAt ? formatDateTime(delivery.nextAttemptAt) : null,
    canResend: delivery.status !== 'pending',
    attempts: delivery.attempts.map((attempt) => ({
      at: formatDateTime(attempt.attemptedAt),
      status: attempt.statusCode === null ? '—' : String(attempt.statusCode),
      duration: `${attempt.durationMs} ms`,
      error: attempt.error,
      excerpt: attempt.responseExcerpt,
    })),
  };
}

/**
 * The webhook endpoint (set, rotate the secret, the secret shown once in the answer to the form),
 * a test ping, and every delivery with its attempts and a "Send again" button.
 */
const webhookRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { webhooks } = app.services;

  async function render(
    request: FastifyRequest,
    reply: FastifyReply,
    extra: { error?: string | null; notice?: string | null; url?: string; secret?: string | null; cursor?: string | undefined },
    status = 200,
  ) {
    const account = accountOf(request);
    const [endpoint, listed] = await Promise.all([webhooks.getEndpoint(account.id), webhooks.listDeliveries(account.id, { limit: 20, cursor: extra.cursor })]);
    const page = listed.kind === 'page' ? listed.page : { items: [], nextCursor: null };
    return reply.page(
      'account/webhook',
      {
        title: 'Webhooks',
        section: 'account',
        tab: 'webhook',
        endpoint: endpoint
          ? {
              ...endpoint,
              updated: formatDateTime(endpoint.updatedAt),
              previousUntil: endpoint.previousSecretUntil ? formatDateTime(endpoint.previousSecretUntil) : null,
              failingSince: endpoint.failingSince ? formatDateTime(endpoint.failingSince) : null,
            }
          : null,
        deliveries: page.items.map(deliveryView),
        nextCursor: page.nextCursor,
        url: extra.url ?? endpoint?.url ?? '',
        secret: extra.secret ?? null,
        error: extra.error ?? null,
        notice: extra.notice ?? null,
      },
      status,
    );
  }

  app.get('/webhook', { schema: { hide: true, querystring: PageQuery } }, async (request, reply) =>
    render(request, reply, { cursor: request.query.cursor, notice: NOTICES[request.query.done ?? ''] ?? null }),
  );

  app.post('/webhook', { schema: { hide: true, body: Form } }, async (request, reply) => {
    const account = accountOf(request);
    const url = typeof request.body.url === 'string' ? request.body.url.trim() : '';
    const outcome = await webhooks.setEndpoint(account.id, url, { rotateSecret: request.body.rotate === 'yes' });
    if (outcome.kind === 'invalid-url') return render(request, reply, { error: `That URL is not accepted: ${outcome.reason}.`, url }, 422);
    const notice = outcome.secret ? 'Saved. Copy the signing secret now: this is the only time it is shown.' : 'Saved.';
    return render(request, reply, { notice, secret: outcome.secret }, outcome.kind === 'created' ? 201 : 200);
  });

  app.post('/webhook/test', { schema: { hide: true } }, async (request, reply) => {
    const outcome = await webhooks.sendTest(accountOf(request).id);
    if (outcome.kind === 'no-endpoint') return render(request, reply, { error: 'Set an endpoint first.' }, 404);
    if (outcome.kind === 'disabled') return render(request, reply, { error: 'The endpoint is disabled: save it again to enable it.' }, 409);
    if (outcome.kind === 'throttled') {
      const seconds = Math.max(1, Math.ceil(outcome.retryAfterMs / 1000));
      reply.header('retry-after', String(seconds));
      return render(request, reply, { error: `Too many test pings: try again in ${seconds} seconds.` }, 429);
    }
    const attempt = outcome.delivery.attempts[0];
    return outcome.delivery.status === 'delivered'
      ? render(request, reply, { notice: `Ping delivered: your endpoint answered ${attempt?.statusCode} in ${attempt?.durationMs} ms.` })
      : render(request, reply, { error: `Ping failed: ${attempt?.error ?? 'no answer'}.` });
  });

  app.post('/webhook/deliveries/:id/resend', { schema: { hide: true, params: Type.Object({ id: Type.String({ maxLength: 64 }) }) } }, async (request, reply) => {
    if (!(await webhooks.resend(accountOf(request).id, request.params.id))) {
      return render(request, reply, { error: 'That event is being sent already, or is not one of yours.' }, 404);
    }
    return reply.seeOther('/account/webhook?done=resent');
  });
};

export default webhookRoutes;
