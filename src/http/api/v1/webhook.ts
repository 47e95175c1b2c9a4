import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ApiError, validationError } from '../../../errors.ts';
import type { Delivery, WebhookEndpoint } from '../../../domain/webhook.ts';
import { retryAfter } from '../../../limits/limit-headers.ts';
import { MAX_DELIVERIES_PAGE, MAX_ENDPOINT_URL_CHARS, PINGS_PER_ACCOUNT } from '../../../webhooks/webhook-service.ts';
import { errorRef, jsonBodyErrorResponses, leftToTheService, retryAfterHeader } from '../schemas.ts';
import { accountErrorResponses, pageLimit, pageQuery } from './watches.ts';

const EndpointSchema = Type.Object(
  {
    url: Type.String({ description: 'Where events are POSTed.' }),
    enabled: Type.Boolean({ description: 'False once every delivery failed for three days; saving the endpoint again enables it.' }),
    secret_hint: Type.String({ description: 'The first characters of the signing secret, to tell secrets apart.' }),
    previous_secret_expires_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'After a rotation: until when the previous secret signs too (a second v1= in the signature).',
    }),
    failing_since: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'Since when every attempt has failed, or null.' }),
    disabled_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    disabled_reason: Type.Union([Type.String(), Type.Null()]),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'WebhookEndpoint', title: 'WebhookEndpoint' },
);

const AttemptSchema = Type.Object(
  {
    attempted_at: Type.String({ format: 'date-time' }),
    url: Type.String(),
    status_code: Type.Union([Type.Integer(), Type.Null()], { description: 'The status the endpoint answered; null when no answer came.' }),
    duration_ms: Type.Integer(),
    error: Type.Union([Type.String(), Type.Null()], { description: 'Why the attempt did not deliver (timeout, refused address, a non-2xx status), or null.' }),
    response_excerpt: Type.Union([Type.String(), Type.Null()], { description: 'The first 500 characters of the answer body.' }),
  },
  { $id: 'DeliveryAttempt', title: 'DeliveryAttempt' },
);

const DeliverySchema = Type.Object(
  {
    event_id: Type.String({ description: 'The event id (`evt_...`), also sent as Vinhistory-Event-Id.' }),
    type: Type.Union([Type.Literal('lot.created'), Type.Literal('lot.updated'), Type.Literal('ping'), Type.Literal('batch.completed')]),
    created_at: Type.String({ format: 'date-time' }),
    status: Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')], {
      description: 'pending: not delivered yet, retried; delivered: a 2xx came; failed: given up after 72 hours (or the endpoint was disabled).',
    }),
    next_attempt_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When a pending event is tried next.' }),
    attempts: Type.Array(Type.Ref(AttemptSchema), { description: 'Every attempt, oldest first.' }),
    event: Type.Object({}, { additionalProperties: true, description: 'The event exactly as it is sent (docs/webhooks.md).' }),
  },
  { $id: 'Delivery', title: 'Delivery' },
);

function endpointJson(endpoint: WebhookEndpoint) {
  return {
    url: endpoint.url,
    enabled: endpoint.enabled,
    secret_hint: endpoint.secretHint,
    previous_secret_expires_at: endpoint.previousSecretUntil,
    failing_since: endpoint.failingSince,
    disabled_at: endpoint.disabledAt,
    disabled_reason: endpoint.disabledReason,
    created_at: endpoint.createdAt,
    updated_at: endpoint.updatedAt,
  };
}

function deliveryJson(delivery: Delivery) {
  return {
    event_id: delivery.eventId,
    type: delivery.type,
    created_at: delivery.createdAt,
    status: delivery.status,
    next_attempt_at: delivery.nextAttemptAt,
    attempts: delivery.attempts.map((attempt) => ({
      attempted_at: attempt.attemptedAt,
      url: attempt.url,
      status_code: attempt.statusCode,
      duration_ms: attempt.durationMs,
      error: attempt.error,
      response_excerpt: attempt.responseExcerpt,
    })),
    event: JSON.parse(delivery.payload) as Record<string, unknown>,
  };
}

const common = { tags: ['Webhooks'], security: [{ apiToken: [] }] };

const webhookRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { webhooks } = app.services;
  app.addSchema(EndpointSchema);
  app.addSchema(AttemptSchema);
  app.addSchema(DeliverySchema);

  const SetAnswer = (description: string) =>
    Type.Intersect(
      [
        Type.Ref(EndpointSchema),
        Type.Object({
          secret: Type.Union([Type.String(), Type.Null()], {
            description: 'The signing secret (`whsec_...`), shown this once: on the first PUT and on a rotation; null otherwise.',
          }),
        }),
      ],
      { description },
    );

  app.put(
    '/api/v1/webhook',
    {
      onRequest: app.authenticateAccount,
      bodyLimit: 4096,
      attachValidation: true,
      schema: {
        ...common,
        summary: 'Set where events go',
        description:
          'Body `{"url": "https://..."}`; add `"rotate_secret": true` for a new secret, the old one signing too for 24 hours. ' +
          'Only https:// URLs on public addresses are accepted (the address is checked again at each delivery). Saving a disabled endpoint enables it again.',
        operationId: 'setWebhook',
        body: Type.Object({
          url: Type.String({
            minLength: 9,
            maxLength: MAX_ENDPOINT_URL_CHARS,
            pattern: '^\\s*[Hh][Tt][Tt][Pp][Ss]?://\\S',
            description: 'Where events are POSTed: https:// (http:// outside production), a public address, no user name or password; the address is checked by the service (422).',
            examples: ['https://hooks.example.com/vinhistory'],
          }),
          rotate_secret: Type.Optional(Type.Boolean({ description: 'Make a new signing secret (default false).' })),
        }),
        response: {
          201: SetAnswer('The endpoint is set, with its secret (shown once).'),
          200: SetAnswer('The endpoint is updated; the secret with a rotation, else null.'),
          ...accountErrorResponses,
          ...jsonBodyErrorResponses,
          413: errorRef('PAYLOAD_TOO_LARGE', 'Request body too large (the limit is 4 KiB).'),
          422: errorRef('VALIDATION_FAILED', 'url missing, not https://, with credentials, or a non-public address; `errors.url` says why.'),
        },
      },
    },
    async (request, reply) => {
      // A url's length and scheme are worded by the service, as every other reason it refuses one.
      if (request.validationError && !leftToTheService(request.validationError, ['/url'])) throw request.validationError;
      const outcome = await webhooks.setEndpoint(request.tokenPrincipal!.accountId, request.body.url, { rotateSecret: request.body.rotate_secret === true });
      if (outcome.kind === 'invalid-url') throw validationError('url', [`The url is not accepted: ${outcome.reason}.`]);
      return reply.code(outcome.kind === 'created' ? 201 : 200).send({ ...endpointJson(outcome.endpoint), secret: outcome.secret });
    },
  );

  app.get(
    '/api/v1/webhook',
    {
      onRequest: app.authenticateAccount,
      schema: {
        ...common,
        summary: "The account's webhook endpoint",
        description: 'The endpoint events go to, whether it is enabled, and the first characters of its signing secret (never the secret).',
        operationId: 'getWebhook',
        response: {
          200: Type.Ref(EndpointSchema, { description: 'The endpoint (never its secret).' }),
          ...accountErrorResponses,
          404: errorRef('NOT_FOUND', 'No endpoint is set.'),
        },
      },
    },
    async (request) => {
      const endpoint = await webhooks.getEndpoint(request.tokenPrincipal!.accountId);
      if (!endpoint) throw new ApiError('NOT_FOUND', 'No webhook endpoint is set: PUT /api/v1/webhook sets one.');
      return endpointJson(endpoint);
    },
  );

  app.post(
    '/api/v1/webhook/test',
    {
      onRequest: app.authenticateAccount,
      schema: {
        ...common,
        summary: 'Send a ping event now',
        description: `Sends a signed \`ping\` event to the endpoint at once and answers its delivery with the attempt. A ping is not retried. At most ${PINGS_PER_ACCOUNT.limit} pings per account in any ${PINGS_PER_ACCOUNT.windowMs / 1000} seconds.`,
        operationId: 'testWebhook',
        response: {
          200: Type.Ref(DeliverySchema, { description: 'The ping and its attempt (status delivered or failed).' }),
          ...accountErrorResponses,
          404: errorRef('NOT_FOUND', 'No endpoint is set.'),
          409: errorRef('WEBHOOK_DISABLED', 'The endpoint is disabled: save it again (PUT) first.'),
          429: errorRef('RATE_LIMITED', `More than ${PINGS_PER_ACCOUNT.limit} pings in ${PINGS_PER_ACCOUNT.windowMs / 1000} seconds; see Retry-After. Nothing was sent.`, retryAfterHeader),
        },
      },
    },
    async (request) => {
      const outcome = await webhooks.sendTest(request.tokenPrincipal!.accountId);
      if (outcome.kind === 'no-endpoint') throw new ApiError('NOT_FOUND', 'No webhook endpoint is set: PUT /api/v1/webhook sets one.');
      if (outcome.kind === 'disabled') throw new ApiError('WEBHOOK_DISABLED', 'The webhook endpoint is disabled; save it again with PUT /api/v1/webhook to enable it.');
      if (outcome.kind === 'throttled') {
        throw new ApiError('RATE_LIMITED', `Too many test pings: at most ${PINGS_PER_ACCOUNT.limit} per ${PINGS_PER_ACCOUNT.windowMs / 1000} seconds per account.`, {
          headers: { 'retry-after': retryAfter(outcome.retryAfterMs) },
        });
      }
      return deliveryJson(outcome.delivery);
    },
  );

  app.get(
    '/api/v1/webhook/deliveries',
    {
      onRequest: app.authenticateAccount,
      schema: {
        ...common,
        summary: 'Every event sent to the endpoint, and every attempt',
        description: 'Newest event first; each with its attempts (time, status, duration, the first bytes of the answer). Cursor paging as for watches.',
        operationId: 'listDeliveries',
        querystring: pageQuery(MAX_DELIVERIES_PAGE, 20),
        response: {
          200: Type.Object(
            { data: Type.Array(Type.Ref(DeliverySchema)), next_cursor: Type.Union([Type.String(), Type.Null()], { description: 'The cursor of the next page, or null.' }) },
            { description: 'A page of deliveries.' },
          ),
          ...accountErrorResponses,
          422: errorRef('VALIDATION_FAILED', 'limit out of range, or a cursor that is well formed but not one of ours.'),
        },
      },
    },
    async (request) => {
      const outcome = await webhooks.listDeliveries(request.tokenPrincipal!.accountId, { limit: pageLimit(request.query.limit, 20), cursor: request.query.cursor });
      if (outcome.kind === 'bad-cursor') throw validationError('cursor', ['The cursor is not one this API gave; start again without it.']);
      return { data: outcome.page.items.map(deliveryJson), next_cursor: outcome.page.nextCursor };
    },
  );

  app.post(
    '/api/v1/webhook/deliveries/:event_id/resend',
    {
      onRequest: app.authenticateAccount,
      schema: {
        ...common,
        summary: 'Send an event again',
        description: 'Queues a delivered or failed event again, due now, retried for 72 hours as a new one would be. Same event id and body.',
        operationId: 'resendDelivery',
        params: Type.Object({ event_id: Type.String({ maxLength: 64 }) }),
        response: {
          202: Type.Object({ event_id: Type.String(), status: Type.Literal('pending') }, { description: 'Queued; it is sent within moments.' }),
          ...accountErrorResponses,
          404: errorRef('NOT_FOUND', 'The account has no delivered or failed event of that id (a pending one is being sent already).'),
          422: errorRef('VALIDATION_FAILED', 'An event id longer than 64 characters (no event id is); `errors.event_id` says so.'),
        },
      },
    },
    async (request, reply) => {
      if (!(await webhooks.resend(request.tokenPrincipal!.accountId, request.params.event_id))) {
        throw new ApiError('NOT_FOUND', 'You have no delivered or failed event with that id.');
      }
      return reply.code(202).send({ event_id: request.params.event_id, status: 'pending' as const });
    },
  );
};

export default webhookRoutes;
