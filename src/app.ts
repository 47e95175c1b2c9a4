import Fastify, { type FastifyBaseLogger, type FastifyServerOptions } from 'fastify';
import fp from 'fastify-plugin';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Container } from './container.ts';
import { lazyRequestLogger, loggerOptions, requestIdFrom } from './observability/logger.ts';
import helmet from './http/plugins/helmet.ts';
import swagger from './http/plugins/swagger.ts';
import view from './web/view.ts';
import authentication from './http/plugins/authentication.ts';
import errorHandler from './http/plugins/error-handler.ts';
import metricsPlugin from './http/plugins/metrics.ts';
import requestsInFlight from './http/plugins/requests-in-flight.ts';
import healthRoutes from './http/health.ts';
import lotRoutes from './http/api/v1/lots.ts';
import catalogueRoutes from './http/api/v1/catalogue.ts';
import marketRoutes from './http/api/v1/market.ts';
import lotHistoryRoutes from './http/api/v1/lot-history.ts';
import mediaRoutes from './http/media.ts';
import searchRoutes from './http/api/v1/search.ts';
import usageRoutes from './http/api/v1/usage.ts';
import watchesRoutes from './http/api/v1/watches.ts';
import webhookRoutes from './http/api/v1/webhook.ts';
import adminLotsRoutes from './http/admin/lots.ts';
import adminAccountsRoutes from './http/admin/accounts.ts';
import adminInvoicesRoutes from './http/admin/invoices.ts';
// Feeds the service pulls itself (docs/feeds.md).
import adminFeedsRoutes from './http/admin/feeds.ts';
import stripeWebhookRoutes from './http/webhooks/stripe.ts';
import reportRoutes from './web/report/index.ts';
import signedReportRoutes from './web/report/signed-report.ts';
import webRoutes from './web/index.ts';
// Batches (issue 26).
import batchesRoutes from './http/api/v1/batches.ts';
import mcpRoutes from './mcp/route.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** The container's services: the only way routes and plugins reach the product. */
    services: Container;
  }
}

export interface BuildAppOptions {
  services: Container;
  /** Pino options, or false for tests. Defaults to the configured level. */
  logger?: FastifyServerOptions['logger'];
  /** A logger made beforehand (server.ts), so that services built before the app log through it. */
  loggerInstance?: FastifyBaseLogger;
}

/** Request headers are a few KiB: a client that needs longer to send them is stalling. */
const HEADERS_TIMEOUT_MS = 10_000;

export type App = Awaited<ReturnType<typeof buildApp>>;

/**
 * Builds the whole application without listening, so that tests drive it with inject() and
 * server.ts only adds the process concerns (port, signals). The services come built, from the
 * container; the app owns only HTTP.
 */
export async function buildApp(options: BuildAppOptions) {
  const { services } = options;
  const { config } = services;
  const app = Fastify({
    ...(options.loggerInstance
      ? { loggerInstance: options.loggerInstance }
      : { logger: options.logger ?? loggerOptions(config) }),
    // A client's X-Request-Id is kept only when it is a plain id (it is echoed and logged).
    requestIdHeader: false,
    genReqId: (request) => requestIdFrom(request.headers),
    childLoggerFactory: (logger, bindings, options) => lazyRequestLogger(logger as never, bindings, options) as never,
    // HEAD on a search would count against the quota; only the methods a route names answer.
    exposeHeadRoutes: false,
    // Fastify accepts a hop count at run time; its type declarations omit the number form.
    trustProxy: config.trustProxy as boolean | string,
    // A client that stalls while sending a request (a slowloris, half a body) is answered 408 and
    // its connection closed instead of holding it open: the whole request must arrive within
    // REQUEST_TIMEOUT_MS, its headers within 10 s (or that, if shorter). Node looks for late
    // requests only every `connectionsCheckingInterval` (30 s by default), so it looks every
    // second, or five times within a shorter timeout. No idle-socket `connectionTimeout`: it
    // would also cut a long admin import, whose answer comes only once the upload is stored.
    // Idle keep-alive connections still close after Fastify's 72 s (above a load balancer's 60 s).
    requestTimeout: config.requestTimeoutMs,
    http: {
      headersTimeout: Math.min(config.requestTimeoutMs, HEADERS_TIMEOUT_MS),
      connectionsCheckingInterval: Math.min(1000, Math.ceil(config.requestTimeoutMs / 5)),
    },
    // Lots of a VIN ask for a body of a few KiB at most; large bodies belong to admin routes.
    bodyLimit: 1024 * 1024,
    ajv: { customOptions: { coerceTypes: false, removeAdditional: true, allErrors: false } },
  }).withTypeProvider<TypeBoxTypeProvider>();

  // The API speaks JSON only: a text/plain body is refused with 415 instead of failing validation.
  app.removeContentTypeParser('text/plain');

  await app.register(
    fp(
      async (instance) => {
        instance.decorate('services', services);
      },
      { name: 'services' },
    ),
  );
  // Requests in flight when a shutdown starts still get their answer; `Connection: close` then
  // frees their keep-alive sockets at once, so the server closes without waiting out idle clients.
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  // A callback hook: an async one costs a promise per request on every route.
  app.addHook('onSend', (request, reply, payload, done) => {
    reply.header('x-request-id', request.id);
    if (closing) reply.header('connection', 'close');
    done(null, payload);
  });

  // The API's plugins (src/http/plugins/) and the website's (src/web/) at the root, each for a
  // reason of its own. helmet: security headers for every answer, the full set (CSP) for pages
  // and only nosniff for /api/ routes (decided per route in helmet.ts). view (the website's):
  // templates and /assets/, at the root because the error handler answers unknown non-API paths
  // with the 404 page and the report pages sit outside the site's scope. swagger sees every route;
  // the error handler and metrics cover both; authentication only decorates (the API's routes call
  // its hooks; no page does). The site's session and CSRF plugin
  // (web/web-session.ts) is registered inside the site's scope (web/index.ts), never here.
  await app.register(helmet);
  await app.register(view);
  await app.register(swagger);
  await app.register(errorHandler);
  await app.register(metricsPlugin);
  // Counts the searches and the other counted requests in flight, which a feed's pull gives way to.
  await app.register(requestsInFlight);
  await app.register(authentication);

  // The website (landing, pricing, sign-up, the personal account) in a scope of its own with
  // cookies, sessions and CSRF; the payment provider's webhooks in another, reading raw bodies.
  await app.register(webRoutes);
  await app.register(stripeWebhookRoutes);
  await app.register(healthRoutes);
  await app.register(searchRoutes);
  await app.register(lotRoutes);
  await app.register(catalogueRoutes);
  await app.register(marketRoutes);
  // Issue 29: a lot's history (counted).
  await app.register(lotHistoryRoutes);
  await app.register(usageRoutes);
  await app.register(watchesRoutes);
  await app.register(webhookRoutes);
  await app.register(reportRoutes);
  await app.register(signedReportRoutes);
  await app.register(mediaRoutes);
  await app.register(adminLotsRoutes);
  // The operators' customer operations and audit log (docs/operators.md).
  await app.register(adminAccountsRoutes);
  await app.register(adminInvoicesRoutes);
  // The operators' feeds (docs/feeds.md).
  await app.register(adminFeedsRoutes);
  // Batches of searches run in the background (issue 26).
  await app.register(batchesRoutes);
  // The MCP server for AI agents (docs/mcp.md): the API's operations as tools, at /mcp.
  await app.register(mcpRoutes);

  return app;
}
