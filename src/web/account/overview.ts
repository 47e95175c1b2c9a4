import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { accountOf } from './current-account.ts';
import { planSummary, usageSummary } from './present-account.ts';

const NOTICES: Record<string, string> = {
  welcome: 'Welcome to vinhistory. Choose a plan to get your first API token.',
  'password-reset': 'Your new password is set, and every other browser has been logged out.',
};

/** The account's home: plan, this period's use, tokens, and what to do next. */
const overviewRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { services } = app;
  app.get('/', { schema: { hide: true, querystring: Type.Object({ done: Type.Optional(Type.String({ maxLength: 40 })) }) } }, async (request, reply) => {
    const account = accountOf(request);
    const now = new Date();
    const [billing, usage, liveTokens] = await Promise.all([
      services.payments.billing.overview(account.id, now),
      app.services.usage.forAccount(account.id, now),
      services.apiTokens.countLive(account.id, now),
    ]);
    return reply.page('account/overview', {
      title: 'Your account',
      section: 'account',
      tab: 'overview',
      notice: NOTICES[request.query.done ?? ''] ?? null,
      email: account.email,
      plan: planSummary(billing),
      usage: usage ? usageSummary(usage) : null,
      liveTokens,
      openInvoice: billing.openInvoices[0] ?? null,
      // A first plan bought by invoice: the plan card says which plan waits for which payment.
      awaiting: (() => {
        const invoice = billing.subscription ? undefined : billing.openInvoices.find((open) => open.kind === 'subscribe');
        if (!invoice) return null;
        const plan = billing.plans.find((candidate) => candidate.code === invoice.planCode);
        return { id: invoice.id, reference: invoice.reference, planName: plan?.name ?? invoice.planCode, billing: invoice.billing === 'annual' ? 'Annual billing' : 'Monthly billing' };
      })(),
      apiUrl: `${app.services.config.publicBaseUrl}/api/v1/search`,
    });
  });
};

export default overviewRoutes;
