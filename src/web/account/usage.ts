import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { SEARCH_KINDS, type SearchKind } from '../../domain/search.ts';
import { formatDateTime, formatInteger } from '../format.ts';
import { accountOf } from './current-account.ts';
import { usageSummary } from './present-account.ts';
import { usageChart } from './usage-chart.ts';

const PAGE_SIZE = 25;

/** Each kind of counted call as the page names it, and what its record's subject is. */
const KINDS: Record<SearchKind, { name: string; asked: string }> = {
  search: { name: 'Search by VIN', asked: 'VIN' },
  lot: { name: 'Lookup by lot', asked: 'Lot' },
  catalogue: { name: 'Catalogue search', asked: 'Query' },
  market: { name: 'Market value', asked: 'Query' },
  history: { name: 'Lot history', asked: 'Query' },
};

/** What a counted call asked, as the customer wrote it: a call's record holds `<kind>?<query>` (runCounted). */
function askedOf(kind: SearchKind, subject: string): string {
  if (kind === 'search' || kind === 'lot') return subject;
  const query = subject.slice(subject.indexOf('?') + 1);
  return query === '' ? 'no parameters' : query;
}

/** Every kind with its count this period, the kinds of the API's order; zeros shown, so that the table reads the same each month. */
function byKind(counts: { kind: SearchKind; count: number }[]) {
  const of = new Map(counts.map((entry) => [entry.kind, entry.count]));
  return SEARCH_KINDS.map((kind) => ({ kind, name: KINDS[kind].name, count: formatInteger(of.get(kind) ?? 0)! }));
}
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
      const [counts, kinds] = usage
        ? await Promise.all([app.services.usage.dailyCounts(account.id, usage), app.services.usage.countsByKind(account.id, usage)])
        : [[], []];
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
        byKind: usage ? byKind(kinds) : null,
        searches: page.searches.map((search) => ({
          vin: askedOf(search.kind, search.vin),
          kind: search.kind,
          kindName: KINDS[search.kind].name,
          asked: KINDS[search.kind].asked,
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
