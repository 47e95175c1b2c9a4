import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { invoiceDueAt, type Invoice, type InvoiceKind, type InvoiceStatus } from '../../domain/invoice.ts';
import type { BuyerDetails } from '../../domain/account.ts';
import { PaymentError, PaymentUnavailableError } from '../../billing/payment-provider.ts';
import { checkBuyerDetails } from '../../accounts/validation.ts';
import { comparePlans, formatCents } from '../../billing/pricing.ts';
import { formatDate, formatDateTime } from '../format.ts';
import { firstErrors, parseBilling, planCard } from '../site/present.ts';
import { accountOf } from './current-account.ts';
import { planSummary } from './present-account.ts';

const Form = Type.Record(Type.String(), Type.Unknown());

const NOTICES: Record<string, string> = {
  upgraded: 'Your plan is upgraded. The new quota applies from now, to this period’s count.',
  scheduled: 'Your plan will change at the renewal. Until then nothing changes.',
  unscheduled: 'The plan change is withdrawn: you keep your current plan.',
  cancelled: 'Your plan is cancelled. It keeps working until the end of the paid term.',
  resumed: 'Your plan is resumed.',
  'invoice-cancelled': 'The invoice is cancelled.',
  'checkout-success': 'Thank you. Your payment is being confirmed by Stripe; your plan appears here within a minute.',
  'checkout-success-active': 'Thank you: your payment is confirmed and your plan is active.',
  'checkout-cancelled': 'The checkout was cancelled; nothing was charged.',
  welcome: 'Welcome to vinhistory: your account is ready. Confirm your plan below to get your first API token.',
};

const KIND_LABEL: Record<InvoiceKind, string> = { subscribe: 'New subscription', renew: 'Renewal', upgrade: 'Upgrade' };
const STATUS_LABEL: Record<InvoiceStatus, string> = { open: 'Awaiting payment', paid: 'Paid', void: 'Cancelled' };

export function invoiceView(invoice: Invoice) {
  return {
    id: invoice.id,
    reference: invoice.reference,
    kind: KIND_LABEL[invoice.kind],
    description: invoice.description,
    amount: formatCents(invoice.amountCents),
    currency: invoice.currency.toUpperCase(),
    status: invoice.status,
    statusText: STATUS_LABEL[invoice.status],
    provider: invoice.provider,
    issued: formatDate(invoice.createdAt) ?? '',
    due: formatDate(invoiceDueAt(invoice)) ?? '',
    paid: invoice.paidAt ? formatDateTime(invoice.paidAt) : null,
    hostedUrl: invoice.hostedUrl,
    buyer: invoice.buyer,
  };
}

/** A checkout form's buyer fields as the page shows them again. */
function buyerValues(details: BuyerDetails) {
  return { company: details.company ?? '', address: details.address ?? '', tax_id: details.taxId ?? '' };
}

/** Plans, purchases, changes, cancellation and invoices. */
const billingRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { services } = app;
  const billingService = services.payments.billing;

  interface Extra {
    error?: string | null;
    notice?: string | null;
    billing?: string | null;
    chosen?: string | null;
    /** Card payment failed to start: the page offers to try again or to pay by invoice. */
    unavailable?: boolean;
    buyer?: Record<string, string>;
    buyerErrors?: Record<string, string>;
  }

  async function renderBilling(request: FastifyRequest, reply: FastifyReply, extra: Extra, status = 200) {
    const account = accountOf(request);
    const [overview, storedBuyer] = await Promise.all([billingService.overview(account.id, new Date()), billingService.buyerDetails(account.id)]);
    // Back from Stripe's checkout: the webhook may already have started the plan, or not yet.
    const notice = extra.notice === NOTICES['checkout-success'] && overview.subscription ? NOTICES['checkout-success-active']! : (extra.notice ?? null);
    const period = parseBilling(extra.billing) ?? overview.subscription?.billing ?? 'monthly';
    const current = overview.plan;
    const cards = overview.plans.map((plan) => {
      const card = planCard(plan, period);
      let action: { label: string; kind: 'buy' | 'upgrade' | 'downgrade' | 'current' | 'keep' | 'none' };
      // The plan confirmed above gets no second button of its own below.
      if (!overview.subscription && extra.chosen === plan.code) action = { label: 'Chosen: confirm it above', kind: 'current' };
      else if (!overview.subscription) action = { label: `Choose ${plan.name}`, kind: 'buy' };
      else if (!overview.can.change || period !== overview.subscription.billing) action = { label: '', kind: 'none' };
      else if (current && plan.code === current.code) action = overview.scheduledPlan ? { label: `Keep ${plan.name}`, kind: 'keep' } : { label: 'Your plan', kind: 'current' };
      else if (current && comparePlans(plan, current) > 0) action = { label: `Upgrade to ${plan.name}`, kind: 'upgrade' };
      else action = overview.scheduledPlan?.code === plan.code ? { label: 'Starts at renewal', kind: 'current' } : { label: 'Downgrade at renewal', kind: 'downgrade' };
      return { ...card, action, chosen: extra.chosen === plan.code };
    });
    return reply.page(
      'account/billing',
      {
        title: 'Plan and billing',
        section: 'account',
        tab: 'billing',
        error: extra.error ?? null,
        notice,
        overview,
        plan: planSummary(overview),
        provider: overview.provider,
        checkoutProvider: services.payments.checkoutProvider,
        scheduled: overview.scheduledPlan ? { name: overview.scheduledPlan.name, at: overview.paidThrough ? formatDate(overview.paidThrough.toISOString()) : null } : null,
        lapsed: overview.lapsed?.endsAt ? formatDate(overview.lapsed.endsAt) : null,
        period,
        cards,
        chosen: overview.subscription ? null : (cards.find((card) => card.chosen) ?? null),
        invoices: overview.invoices.map(invoiceView),
        unavailable: extra.unavailable ?? false,
        buyer: extra.buyer ?? buyerValues(storedBuyer),
        buyerErrors: extra.buyerErrors ?? {},
      },
      status,
    );
  }

  app.get(
    '/billing',
    {
      schema: {
        hide: true,
        querystring: Type.Object({
          billing: Type.Optional(Type.String({ maxLength: 20 })),
          plan: Type.Optional(Type.String({ maxLength: 64 })),
          done: Type.Optional(Type.String({ maxLength: 40 })),
          checkout: Type.Optional(Type.String({ maxLength: 20 })),
        }),
      },
    },
    async (request, reply) => {
      const { query } = request;
      const done = query.checkout ? `checkout-${query.checkout}` : (query.done ?? '');
      return renderBilling(request, reply, { notice: NOTICES[done] ?? null, billing: query.billing ?? null, chosen: query.plan ?? null });
    },
  );

  /**
   * Runs a change; a refusal the customer can act on re-renders the page with it, as a 409. A
   * payment provider out of reach is a 503 with the choice kept, to try again or pay by invoice.
   */
  async function attempt(request: FastifyRequest, reply: FastifyReply, work: () => Promise<FastifyReply>, keep: Extra = {}) {
    try {
      return await work();
    } catch (error) {
      if (error instanceof PaymentUnavailableError) {
        request.log.error({ err: error.cause }, 'payment provider unavailable');
        return renderBilling(request, reply, { ...keep, error: error.message, unavailable: true }, 503);
      }
      if (!(error instanceof PaymentError)) throw error;
      return renderBilling(request, reply, { ...keep, error: error.message }, 409);
    }
  }

  app.post('/billing/choose', { schema: { hide: true, body: Form } }, async (request, reply) => {
    const { body } = request;
    const billing = parseBilling(body.billing);
    const planCode = typeof body.plan === 'string' ? body.plan : '';
    if (!billing || planCode === '') return renderBilling(request, reply, { error: 'Choose a plan and a billing period.' }, 422);
    const keep: Extra = { billing, chosen: planCode };
    // The checkout form of a bank-transfer invoice asks who it is addressed to.
    let buyer: BuyerDetails | undefined;
    if (body.buyer_form === '1') {
      const checked = checkBuyerDetails({ company: body.company, address: body.address, taxId: body.tax_id });
      // eslint-disable-next-line @typescript-eslint/no-base-to-string -- form fields are strings or absent; String() only bounds an unexpected shape.
      const values = { company: String(body.company ?? '').slice(0, 600), address: String(body.address ?? '').slice(0, 600), tax_id: String(body.tax_id ?? '').slice(0, 600) };
      if ('errors' in checked) return renderBilling(request, reply, { ...keep, buyer: values, buyerErrors: firstErrors(checked.errors) }, 422);
      buyer = checked.details;
    }
    const via = body.via === 'invoice' ? ('invoice' as const) : undefined;
    return attempt(request, reply, async () => {
      const result = await billingService.choose(accountOf(request), planCode, billing, new Date(), buyer, via);
      switch (result.kind) {
        case 'redirect':
          return reply.redirect(result.url, 303);
        case 'invoice':
          return reply.seeOther(`/account/billing/invoices/${result.invoice.id}`);
        case 'upgraded':
          return reply.seeOther('/account/billing?done=upgraded');
        case 'scheduled':
          return reply.seeOther('/account/billing?done=scheduled');
        case 'unscheduled':
          return reply.seeOther('/account/billing?done=unscheduled');
      }
    }, keep);
  });

  app.post('/billing/keep-plan', { schema: { hide: true } }, async (request, reply) =>
    attempt(request, reply, async () => {
      await billingService.keepCurrentPlan(accountOf(request), new Date());
      return reply.seeOther('/account/billing?done=unscheduled');
    }),
  );

  app.post('/billing/cancel', { schema: { hide: true } }, async (request, reply) =>
    attempt(request, reply, async () => {
      await billingService.cancel(accountOf(request), new Date());
      return reply.seeOther('/account/billing?done=cancelled');
    }),
  );

  app.post('/billing/resume', { schema: { hide: true } }, async (request, reply) =>
    attempt(request, reply, async () => {
      await billingService.resume(accountOf(request), new Date());
      return reply.seeOther('/account/billing?done=resumed');
    }),
  );

  app.post('/billing/renew', { schema: { hide: true } }, async (request, reply) =>
    attempt(request, reply, async () => {
      const invoice = await billingService.renew(accountOf(request), new Date());
      return reply.seeOther(`/account/billing/invoices/${invoice.id}`);
    }),
  );

  const InvoiceParams = Type.Object({ id: Type.String({ maxLength: 64 }) });

  app.get('/billing/invoices/:id', { schema: { hide: true, params: InvoiceParams } }, async (request, reply) => {
    const account = accountOf(request);
    // Scoped by the session's account: another customer's invoice id is simply not found.
    const details = await services.invoices.forAccount(account.id, request.params.id);
    if (!details) return app.renderNotFoundPage(request, reply);
    const { invoice, plan } = details;
    const seller = await services.seller.identity();
    return reply.page('account/invoice', {
      title: `Invoice ${invoice.reference}`,
      section: 'account',
      tab: 'billing',
      invoice: invoiceView(invoice),
      planName: plan?.name ?? invoice.planCode,
      billing: invoice.billing === 'annual' ? 'Annual' : 'Monthly',
      email: account.email,
      seller,
      printable: true,
    });
  });

  app.post('/billing/invoices/:id/cancel', { schema: { hide: true, params: InvoiceParams } }, async (request, reply) =>
    attempt(request, reply, async () => {
      await billingService.voidInvoice(accountOf(request), request.params.id, new Date());
      return reply.seeOther('/account/billing?done=invoice-cancelled');
    }),
  );
};

export default billingRoutes;
