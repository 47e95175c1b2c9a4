import fp from 'fastify-plugin';
import { timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';

const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Prometheus metrics at /metrics. Customers must not read them: with METRICS_TOKEN set, the
 * scraper sends `Authorization: Bearer <token>`; without it, only a direct loopback connection
 * (no proxy in between, so a local load balancer cannot relay a customer) is answered.
 */
function mayReadMetrics(request: FastifyRequest, token: string | null): boolean {
  if (token !== null) {
    const match = /^Bearer\s+(.+)$/i.exec(request.headers.authorization ?? '');
    return match !== null && sameSecret(match[1]!.trim(), token);
  }
  const direct = request.headers['x-forwarded-for'] === undefined && request.headers.forwarded === undefined;
  return direct && LOOPBACK.has(request.socket.remoteAddress ?? '');
}

export default fp(
  async (app) => {
    const { metrics, config } = app.services;

    app.addHook('onResponse', async (request, reply) => {
      const labels = {
        route: request.routeOptions.url ?? 'unmatched',
        method: request.method,
        status: String(reply.statusCode),
      };
      metrics.httpRequests.inc(labels);
      metrics.httpDuration.observe(labels, reply.elapsedTime / 1000);
    });

    app.get('/metrics', { schema: { hide: true }, logLevel: 'warn' }, async (request, reply) => {
      if (!mayReadMetrics(request, config.metricsToken)) {
        return reply.code(404).type('application/json; charset=utf-8').send({ message: 'Not found.' });
      }
      return reply.type(metrics.registry.contentType).send(await metrics.registry.metrics());
    });
  },
  { name: 'metrics', dependencies: ['services'] },
);
