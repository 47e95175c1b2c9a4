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

  /**
   * For the operator's monitoring, beside /healthz (which load balancers keep using, so that a
   * missing setting never takes an instance out of rotation): 503 listing what is wrong while the
   * database is unreachable, migrations are behind or the photo store cannot be written, and in
   * production while the setup is incomplete (seller details, contact address, legal pages), mail
   * has no transport or the PDF browser does not start (src/operations/readiness.ts; the slow
   * checks are cached). Outside production the placeholders, the outbox and a missing browser do.
   */
  app.get(
    '/readyz',
    {
      schema: {
        hide: true,
        response: {
          200: Type.Object({ status: Type.Literal('ready') }),
          503: Type.Object({ status: Type.Literal('not_ready'), problems: Type.Array(Type.String()) }),
        },
      },
      logLevel: 'warn',
    },
    async (_request, reply) => {
      const report = await app.services.readiness.check();
      if (report.ready) return { status: 'ready' as const };
      return reply.code(503).send({ status: 'not_ready' as const, problems: [...report.problems] });
    },
  );
};

export default healthRoutes;
