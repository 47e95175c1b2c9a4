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

    // prom-client hashes a label set on every inc/observe; the few (route, method, status) sets a
    // server answers are bound once and reused.
    const bound = new Map<string, { requests: { inc(): void }; duration: { observe(value: number): void } }>();
    app.addHook('onResponse', (request, reply, done) => {
      const route = request.routeOptions.url ?? 'unmatched';
      const key = `${request.method} ${reply.statusCode} ${route}`;
      let series = bound.get(key);
      if (series === undefined) {
        const labels = { route, method: request.method, status: String(reply.statusCode) };
        series = { requests: metrics.httpRequests.labels(labels), duration: metrics.httpDuration.labels(labels) };
        bound.set(key, series);
      }
      series.requests.inc();
      series.duration.observe(reply.elapsedTime / 1000);
      done();
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
