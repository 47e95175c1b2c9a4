import fp from 'fastify-plugin';
import type { onRequestHookHandler } from 'fastify';

/**
 * Counts the API's counted requests in flight (the container's RequestsInFlight), which a feed's
 * pull gives way to (src/worker-threads.ts, GiveWay; issue 25): a search, the catalogue, the
 * market, a lot and its history. The hook is added to those routes alone, so no other route pays
 * for it. A request ends when its response closes: Node's `close` comes once for every response,
 * sent whole, answered with an error, or cut off by the client, so the count never leaks upward
 * (onResponse misses a response whose connection dropped; onRequestAbort misses a client gone
 * after its request arrived).
 */
export const COUNTED_ROUTES: ReadonlySet<string> = new Set([
  '/api/v1/search',
  '/api/v1/lots',
  '/api/v1/market',
  '/api/v1/lots/:auction/:lot_id',
  '/api/v1/lots/:auction/:lot_id/history',
]);

export default fp(
  async (app) => {
    const requests = app.services.requestsInFlight;
    // One function for every response: nothing is made per request but the listener's entry.
    const end = () => requests.end();
    const begin: onRequestHookHandler = (_request, reply, done) => {
      requests.begin();
      reply.raw.once('close', end);
      done();
    };
    app.addHook('onRoute', (route) => {
      if (!COUNTED_ROUTES.has(route.url)) return;
      const own = route.onRequest === undefined ? [] : Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest];
      // First, so that a request refused by a later hook is counted and ended like the others.
      route.onRequest = [begin, ...own];
    });
  },
  { name: 'requests-in-flight', dependencies: ['services'] },
);
