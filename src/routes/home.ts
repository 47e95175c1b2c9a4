import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';

/** The service's root points people at the API reference until a landing page exists. */
const homeRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/', { schema: { hide: true } }, async (_request, reply) => reply.redirect('/docs', 302));
};

export default homeRoutes;
