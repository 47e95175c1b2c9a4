import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type Stripe from 'stripe';

/** Stripe's events are far below this; anything larger is not from Stripe. */
const WEBHOOK_BODY_LIMIT = 512 * 1024;

/**
 * POST /webhooks/stripe: Stripe's events, verified with the endpoint's signing secret
 * (STRIPE_WEBHOOK_SECRET) against the exact bytes received, so this scope reads the body raw
 * instead of through the app's JSON parser. Served only when Stripe is configured.
 *
 * Answers: 200 when the event is applied, was already applied (a retry), or is of no interest;
 * 400 for a missing or bad signature (Stripe shows it in the dashboard); 500 when applying failed,
 * so that Stripe retries it later.
 */
const stripeWebhookRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { services } = app;
  const stripe = services.payments.stripe;
  const handler = services.stripeWebhooks;
  if (!stripe || !handler) return;
  const secret = stripe.webhookSecret;

  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit: WEBHOOK_BODY_LIMIT }, (_request, body, done) => done(null, body));

  app.post('/webhooks/stripe', { schema: { hide: true }, bodyLimit: WEBHOOK_BODY_LIMIT }, async (request, reply) => {
    if (!secret) {
      request.log.error('stripe webhook received but STRIPE_WEBHOOK_SECRET is not set');
      return reply.code(503).send({ message: 'Webhooks are not configured.' });
    }
    const signature = request.headers['stripe-signature'];
    if (typeof signature !== 'string' || !Buffer.isBuffer(request.body)) {
      return reply.code(400).send({ message: 'Missing Stripe-Signature header or body.' });
    }
    let event: Stripe.Event;
    try {
      event = stripe.client.webhooks.constructEvent(request.body, signature, secret);
    } catch (error) {
      request.log.warn({ reason: (error as Error).message }, 'stripe webhook: signature refused');
      return reply.code(400).send({ message: 'The signature does not match this endpoint’s signing secret.' });
    }
    const outcome = await handler.handle(event);
    request.log.info({ event: event.id, type: event.type, outcome }, 'stripe webhook handled');
    return reply.code(200).send({ received: true, outcome });
  });
};

export default stripeWebhookRoutes;
