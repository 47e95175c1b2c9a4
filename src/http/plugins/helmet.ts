import fp from 'fastify-plugin';
import helmet from '@fastify/helmet';

/**
 * Security headers. The CSP allows images from any https origin because lot photos live on the
 * auctions' CDNs; everything else is same-origin and no inline script is served.
 */
export default fp(
  async (app) => {
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
