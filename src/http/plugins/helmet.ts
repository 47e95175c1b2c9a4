import fp from 'fastify-plugin';
import helmet from '@fastify/helmet';

/**
 * Security headers. The CSP allows images from any https origin because lot photos live on the
 * auctions' CDNs; everything else is same-origin and no inline script is served.
 */
/** What a JSON answer of the API needs of helmet's set: browsers must not sniff it into something else. */
const API_HEADERS = { 'x-content-type-options': 'nosniff' } as const;

/** Routes that only ever answer JSON (or a Prometheus text) to programs, never a page: the API, the MCP endpoint, the metrics. */
const isApiRoute = (url: string): boolean => url.startsWith('/api/') || url === '/mcp' || url === '/metrics';

export default fp(
  async (app) => {
    // Helmet's headers (CSP, frame and referrer policies...) are for pages. @fastify/helmet builds
    // them anew on every request (docs/benchmarks.md: 2% of a search's CPU), so JSON API routes
    // skip it and send the one header that concerns them, prebuilt.
    app.addHook('onRoute', (route) => {
      if (!isApiRoute(route.url)) return;
      (route as { helmet?: false }).helmet = false;
      const own = route.onRequest === undefined ? [] : Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest];
      route.onRequest = [
        (_request, reply, done) => {
          reply.headers(API_HEADERS);
          done();
        },
        ...own,
      ];
    });
    // HSTS and upgrade-insecure-requests only make sense when the service is reached over TLS;
    // on http://localhost they would send the browser to an https port nobody listens on.
    const overTls = app.services.config.publicBaseUrl.startsWith('https://');
    await app.register(helmet, {
      hsts: overTls,
      contentSecurityPolicy: {
        directives: {
          defaultSrc: ["'self'"],
          imgSrc: ["'self'", 'data:', 'https:'],
          styleSrc: ["'self'"],
          scriptSrc: ["'self'"],
          objectSrc: ["'none'"],
          frameAncestors: ["'none'"],
          baseUri: ["'self'"],
          formAction: ["'self'"],
          upgradeInsecureRequests: overTls ? [] : null,
        },
      },
      // Report pages link to photos on other origins.
      crossOriginEmbedderPolicy: false,
    });
  },
  { name: 'helmet', dependencies: ['services'] },
);
