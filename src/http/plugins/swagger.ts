import fp from 'fastify-plugin';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { ErrorSchema } from '../api/schemas.ts';
import { ReportSchema } from '../../domain/report.ts';
import { LotSchema } from '../../domain/lot.ts';

/**
 * OpenAPI 3.1 generated from the route schemas, served at /api/v1/openapi.json, and a reference
 * page at /docs (Swagger UI from its npm package: no CDN).
 */
export default fp(
  async (app) => {
    app.addSchema(LotSchema);
    app.addSchema(ReportSchema);
    app.addSchema(ErrorSchema);
    await app.register(swagger, {
      openapi: {
        openapi: '3.1.0',
        info: {
          title: 'vinhistory API',
          version: '1.0.0',
          description:
            'Vehicle auction history by VIN: every known auction lot (damage, odometer, sale price, repair cost, retail value, location, photos) and a shareable report page.\n\n' +
            'Send your API token in the Authorization header, bare (`Authorization: vh_live_...`) or with the Bearer scheme.',
        },
        servers: [{ url: app.services.config.publicBaseUrl }],
        components: {
          securitySchemes: {
            apiToken: {
              type: 'apiKey',
              in: 'header',
              name: 'Authorization',
              description: 'Your API token, e.g. `vh_live_...`, optionally preceded by `Bearer `.',
            },
            operatorToken: {
              type: 'apiKey',
              in: 'header',
              name: 'Authorization',
              description: 'An operator token (`vh_op_...`, made with `vinhistory operator-tokens create`), optionally preceded by `Bearer `. Customer tokens are refused.',
            },
          },
        },
      },
      refResolver: {
        buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`),
      },
    });
    await app.register(swaggerUi, {
      routePrefix: '/docs',
      staticCSP: true,
      // Same rule as the other pages: upgrading to https only makes sense when served over TLS.
      transformStaticCSP: (header) =>
        app.services.config.publicBaseUrl.startsWith('https://') ? header : header.replace(/\s*upgrade-insecure-requests;?/, ''),
      theme: { title: 'vinhistory API reference' },
      uiConfig: { deepLinking: true, defaultModelsExpandDepth: 0, tryItOutEnabled: false },
    });
    app.get('/api/v1/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  },
  { name: 'swagger', dependencies: ['services'] },
);
