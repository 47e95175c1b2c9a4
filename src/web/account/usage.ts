import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { formatDateTime } from '../format.ts';
import { accountOf } from './current-account.ts';
import { usageSummary } from './present-account.ts';
import { usageChart } from './usage-chart.ts';

const PAGE_SIZE = 25;
const CURSOR = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z)~(srch_[0-9a-z]{1,40})$/;

/**
 * This period's use (the one definition: UsageService), a chart of searches per day, and the
 * account's past searches with a link to each report, newest first, paged by a cursor.
 */
const usageRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/usage',
    { schema: { hide: true, querystring: Type.Object({ before: Type.Optional(Type.String({ maxLength: 100 })) }) } },
    async (request, reply) => {
      const account = accountOf(request);
      const now = new Date();
      const cursor = CURSOR.exec(request.query.before ?? '');
      const before = cursor ? { createdAt: cursor[1]!, id: cursor[2]! } : undefined;
      const [usage, page] = await Promise.all([
        app.services.usage.forAccount(account.id, now),
        app.services.usage.historyPage(account.id, { limit: PAGE_SIZE, ...(before ? { before } : {}) }),
      ]);
      const counts = usage ? await app.services.usage.dailyCounts(account.id, usage) : [];
      // Batches (issue 26): the period's searches that were batch items, counted in `used` too.
      const batchItems = usage ? await app.services.batches.itemsInPeriod(account.id, usage.periodStart, usage.resetsAt) : 0;
      const last = page.searches.at(-1);
      return reply.page('account/usage', {
        title: 'Usage',
        section: 'account',
        tab: 'usage',
        usage: usage ? usageSummary(usage) : null,
        batchItems,
        chart: usage ? usageChart(usage.periodStart, usage.resetsAt, counts, now) : null,
        searches: page.searches.map((search) => ({
          vin: search.vin,
          time: formatDateTime(search.createdAt),
          timeIso: search.createdAt,
          found: search.outcome === 'found',
          test: search.sandbox,
          reportId: search.reportId,
          token: search.tokenName ? `${search.tokenName} (${search.tokenPrefix}…)` : '—',
        })),
        olderHref: page.hasMore && last ? `/account/usage?before=${encodeURIComponent(`${last.createdAt}~${last.id}`)}` : null,
        paged: before !== undefined,
      });
    },
  );
};

export default usageRoutes;
