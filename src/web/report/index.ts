import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { presentReport, reportTitle } from './present.ts';

/** The shareable report page: the snapshot a search stored, to anyone holding the link. */
const reportRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/report/:id',
    { schema: { hide: true, params: Type.Object({ id: Type.String() }) } },
    async (request, reply) => {
      const report = await app.services.reports.find(request.params.id);
      if (!report) return app.renderNotFoundPage(request, reply);
      const view = presentReport(report);
      reply.header('x-robots-tag', 'noindex, nofollow').header('cache-control', 'private, max-age=300');
      // A sandbox token's report shows test data: the page says so, whoever opens the link.
      return reply.view('report', { title: reportTitle(view), report: view, testReport: report.sandbox === true });
    },
  );
};

export default reportRoutes;
