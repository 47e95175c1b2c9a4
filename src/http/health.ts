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
   * missing setting never takes an instance out of rotation): 503 while the database is
   * unreachable or, in production, while the operator's setup is incomplete (seller details,
   * contact address, legal pages), listing what is missing. Outside production the placeholders
   * stand in and only the database counts.
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
      const problems = await setupProblems(app.services);
      if (problems.length === 0) return { status: 'ready' as const };
      return reply.code(503).send({ status: 'not_ready' as const, problems });
    },
  );
};

/** What keeps the service from being ready to take customers, as lines (also printed by `serve` at start). */
export async function setupProblems(services: {
  database: { ping(): Promise<unknown> };
  seller: { missing(): Promise<string[]> };
  legal: { missing(): Promise<string[]> };
  config: { isProduction: boolean };
}): Promise<string[]> {
  const problems: string[] = [];
  try {
    await services.database.ping();
  } catch {
    problems.push('the database is unreachable');
  }
  if (services.config.isProduction) problems.push(...(await services.seller.missing()), ...(await services.legal.missing()));
  return problems;
}

export default healthRoutes;
