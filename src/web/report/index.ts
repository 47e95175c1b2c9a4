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
      // Photos archived since the snapshot was taken show from the archive (thumbnails opening the full image).
      const links = await app.services.media.photoLinks(report.lots.flatMap((lot) => lot.images));
      const view = presentReport(report, (url) => links.get(url) ?? { src: url, href: url });
      reply.header('x-robots-tag', 'noindex, nofollow').header('cache-control', 'private, max-age=300');
      return reply.view('report', { title: reportTitle(view), report: view });
    },
  );
};

export default reportRoutes;
