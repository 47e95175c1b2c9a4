import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import fp from 'fastify-plugin';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Config } from './config.ts';
import { loggerOptions } from './logger.ts';
import type { Db } from './db/database.ts';
import type { Repositories } from './repositories/index.ts';
import type { RateLimiter } from './services/rate-limiter/rate-limiter.ts';
import { Metrics } from './services/metrics.ts';
import { SearchService } from './services/search-service.ts';
import { UsageService } from './services/usage-service.ts';
import helmet from './plugins/external/helmet.ts';
import swagger from './plugins/external/swagger.ts';
import view from './plugins/external/view.ts';
import authentication from './plugins/app/authentication.ts';
import errorHandler from './plugins/app/error-handler.ts';
import metricsPlugin from './plugins/app/metrics.ts';
import healthRoutes from './routes/health.ts';
import searchRoutes from './routes/api/v1/search.ts';
import usageRoutes from './routes/api/v1/usage.ts';
import reportRoutes from './routes/report/index.ts';
import adminLotsRoutes from './routes/admin/lots.ts';
import webRoutes from './routes/pages/index.ts';
import stripeWebhookRoutes from './routes/webhooks/stripe.ts';
import { createCustomerServices, type CustomerServicesOverrides } from './services/accounts/customer-services.ts';

export interface AppDeps {
  config: Config;
  db: Db;
  repos: Repositories;
  rateLimiter: RateLimiter;
  searchService: SearchService;
  usage: UsageService;
  metrics: Metrics;
}

declare module 'fastify' {
  interface FastifyInstance {
    deps: AppDeps;
  }
}

export interface BuildAppOptions {
  config: Config;
  db: Db;
  repos: Repositories;
  rateLimiter: RateLimiter;
  /** Defaults to a fresh registry without the process metrics (tests build many apps). */
  metrics?: Metrics;
  /** Pino options, or false for tests. Defaults to the configured level. */
  logger?: FastifyServerOptions['logger'];
  /** A logger made beforehand (server.ts), so that services built before the app log through it. */
  loggerInstance?: FastifyBaseLogger;
  now?: () => Date;
  /** The personal account's outside services (mail, Stripe), replaced in tests. */
  customerAccounts?: CustomerServicesOverrides;
}

export type App = Awaited<ReturnType<typeof buildApp>>;

/**
 * Builds the whole application without listening, so that tests drive it with inject() and
 * server.ts only adds the process concerns (port, signals).
 */
export async function buildApp(options: BuildAppOptions) {
  const { config } = options;
  const app = Fastify({
    ...(options.loggerInstance
      ? { loggerInstance: options.loggerInstance }
      : { logger: options.logger ?? loggerOptions(config) }),
    genReqId: () => randomUUID(),
    requestIdHeader: 'x-request-id',
    // HEAD on a search would count against the quota; only the methods a route names answer.
    exposeHeadRoutes: false,
    // Fastify accepts a hop count at run time; its type declarations omit the number form.
    trustProxy: config.trustProxy as boolean | string,
    // Lots of a VIN ask for a body of a few KiB at most; large bodies belong to admin routes.
    bodyLimit: 1024 * 1024,
    ajv: { customOptions: { coerceTypes: false, removeAdditional: true, allErrors: false } },
  }).withTypeProvider<TypeBoxTypeProvider>();

  // The API speaks JSON only: a text/plain body is refused with 415 instead of failing validation.
  app.removeContentTypeParser('text/plain');

  const metrics = options.metrics ?? new Metrics({ defaultMetrics: false });
  const searchService = new SearchService({
    metrics,
    repos: options.repos,
    rateLimiter: options.rateLimiter,
    publicBaseUrl: config.publicBaseUrl,
    ...(options.now ? { now: options.now } : {}),
    onBackgroundError: (error) => app.log.warn({ err: error }, 'background write failed'),
  });
  const deps: AppDeps = {
    config,
    db: options.db,
    repos: options.repos,
    rateLimiter: options.rateLimiter,
    searchService,
    usage: new UsageService(options.repos),
    metrics,
  };
  await app.register(
    fp(
      async (instance) => {
        instance.decorate('deps', deps);
      },
      { name: 'deps' },
    ),
  );
  // Requests in flight when a shutdown starts still get their answer; `Connection: close` then
  // frees their keep-alive sockets at once, so the server closes without waiting out idle clients.
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
    if (closing) reply.header('connection', 'close');
  });

  await app.register(helmet);
  await app.register(view);
  await app.register(swagger);
  await app.register(errorHandler);
  await app.register(metricsPlugin);
  await app.register(authentication);

  // The website (landing, pricing, sign-up, the personal account) in a scope of its own with
  // cookies, sessions and CSRF; the payment provider's webhooks in another, reading raw bodies.
  const customer = createCustomerServices({
    config,
    db: options.db,
    repos: options.repos,
    log: app.log,
    ...(options.customerAccounts ? { overrides: options.customerAccounts } : {}),
  });
  app.addHook('onClose', () => customer.close());
  await app.register(webRoutes, { services: customer });
  await app.register(stripeWebhookRoutes, { services: customer });
  await app.register(healthRoutes);
  await app.register(searchRoutes);
  await app.register(usageRoutes);
  await app.register(reportRoutes);
  await app.register(adminLotsRoutes);

  return app;
}
