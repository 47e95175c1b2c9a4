import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';

/** For load balancers: 200 when the instance can reach its database, 503 when it cannot. */
const healthRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/healthz',
    {
      schema: {
        hide: true,
        response: {
          200: Type.Object({ status: Type.Literal('ok') }),
          503: Type.Object({ status: Type.Literal('unavailable'), message: Type.String() }),
        },
      },
      logLevel: 'warn',
    },
    async (_request, reply) => {
      try {
        await app.services.database.ping();
        return { status: 'ok' as const };
      } catch (error) {
        app.log.error({ err: error }, 'health check: database unreachable');
        return reply.code(503).send({ status: 'unavailable' as const, message: 'The database is unreachable.' });
      }
    },
  );
};

export default healthRoutes;
