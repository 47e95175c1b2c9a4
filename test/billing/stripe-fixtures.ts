import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import Stripe from 'stripe';
import { STRIPE_METADATA } from '../../src/billing/stripe-provider.ts';

export const STRIPE_ENV = { STRIPE_SECRET_KEY: 'sk_test_vinhistory', STRIPE_WEBHOOK_SECRET: 'whsec_test_vinhistory_signing_secret' };

const stripe = new Stripe(STRIPE_ENV.STRIPE_SECRET_KEY);
const id = (prefix: string) => `${prefix}_${randomBytes(8).toString('hex')}`;
const unix = (date: Date) => Math.floor(date.getTime() / 1000);

/** An event as Stripe sends it, signed with the endpoint's secret the way Stripe signs it. */
export function signedEvent(type: string, object: Record<string, unknown>, options: { secret?: string; id?: string; created?: Date } = {}) {
  const payload = JSON.stringify({
    id: options.id ?? id('evt'),
    object: 'event',
    api_version: '2026-10-28.endive',
    created: unix(options.created ?? new Date()),
    type,
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    data: { object },
  });
  const signature = stripe.webhooks.generateTestHeaderString({ payload, secret: options.secret ?? STRIPE_ENV.STRIPE_WEBHOOK_SECRET });
  return { payload, headers: { 'stripe-signature': signature, 'content-type': 'application/json' } };
}

export interface PaidInvoiceInput {
  subscription: string;
  customer?: string;
  billingReason: 'subscription_create' | 'subscription_cycle' | 'subscription_update';
  periodStart: Date;
  periodEnd: Date;
  amount: number;
  metadata?: { accountId: string; plan: string; billing: 'monthly' | 'annual' };
}

/** The invoice of an invoice.paid event, with the fields of the API version the client pins. */
export function paidInvoice(input: PaidInvoiceInput): Record<string, unknown> {
  const invoiceId = id('in');
  return {
    id: invoiceId,
    object: 'invoice',
    amount_paid: input.amount,
    billing_reason: input.billingReason,
    currency: 'usd',
    customer: input.customer ?? 'cus_test',
    hosted_invoice_url: `https://invoice.stripe.test/${invoiceId}`,
    number: `VHT-${randomBytes(3).toString('hex').toUpperCase()}`,
    status: 'paid',
    status_transitions: { paid_at: unix(input.periodStart) },
    parent: {
      type: 'subscription_details',
      quote_details: null,
      subscription_details: {
        subscription: input.subscription,
        metadata: input.metadata
          ? { [STRIPE_METADATA.account]: input.metadata.accountId, [STRIPE_METADATA.plan]: input.metadata.plan, [STRIPE_METADATA.billing]: input.metadata.billing }
          : {},
      },
    },
    lines: {
      object: 'list',
      has_more: false,
      data: [
        {
          id: id('il'),
          object: 'line_item',
          amount: input.amount,
          currency: 'usd',
          description: '1 × vinhistory plan',
          period: { start: unix(input.periodStart), end: unix(input.periodEnd) },
          parent: { type: 'subscription_item_details' },
        },
      ],
    },
  };
}

export function stripeSubscription(input: { id: string; cancelAtPeriodEnd?: boolean; status?: string; endedAt?: Date | null }): Record<string, unknown> {
  return {
    id: input.id,
    object: 'subscription',
    cancel_at_period_end: input.cancelAtPeriodEnd ?? false,
    cancel_at: null,
    status: input.status ?? 'active',
    ended_at: input.endedAt ? unix(input.endedAt) : null,
    items: { object: 'list', data: [] },
    metadata: {},
  };
}

export interface StubRequest {
  method: string;
  path: string;
  form: URLSearchParams;
}

/**
 * A local stand-in for the few Stripe API calls the provider makes (products, Checkout Sessions,
 * subscriptions), so that the Stripe path runs offline. It records each request for the tests to
 * check, and serves a placeholder checkout page where Stripe's would be.
 */
export class StripeStub {
  readonly requests: StubRequest[] = [];
  private readonly products = new Set<string>();
  private server: Server | null = null;
  port = 0;

  get origin(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      void this.handle(req).then(
        ({ status, body, type }) => {
          res.writeHead(status, { 'content-type': type ?? 'application/json' });
          res.end(typeof body === 'string' ? body : JSON.stringify(body));
        },
        (error: Error) => {
          res.writeHead(500, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: { message: error.message, type: 'api_error' } }));
        },
      );
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as { port: number }).port;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private async handle(req: IncomingMessage): Promise<{ status: number; body: unknown; type?: string }> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const url = new URL(req.url ?? '/', this.origin);
    const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
    this.requests.push({ method: req.method ?? 'GET', path: url.pathname, form });

    const product = /^\/v1\/products\/([\w-]+)$/.exec(url.pathname);
    if (req.method === 'GET' && product) {
      if (!this.products.has(product[1]!)) {
        return { status: 404, body: { error: { type: 'invalid_request_error', code: 'resource_missing', message: `No such product: '${product[1]}'` } } };
      }
      return { status: 200, body: { id: product[1], object: 'product' } };
    }
    if (req.method === 'POST' && url.pathname === '/v1/products') {
      const productId = form.get('id')!;
      this.products.add(productId);
      return { status: 200, body: { id: productId, object: 'product', name: form.get('name') } };
    }
    if (req.method === 'POST' && url.pathname === '/v1/checkout/sessions') {
      const sessionId = id('cs_test');
      return { status: 200, body: { id: sessionId, object: 'checkout.session', url: `${this.origin}/pay/${sessionId}`, mode: 'subscription' } };
    }
    const subscription = /^\/v1\/subscriptions\/([\w-]+)$/.exec(url.pathname);
    if (subscription) {
      return { status: 200, body: { id: subscription[1], object: 'subscription', items: { object: 'list', data: [{ id: 'si_test_item', object: 'subscription_item' }] } } };
    }
    if (req.method === 'GET' && url.pathname.startsWith('/pay/')) {
      return {
        status: 200,
        type: 'text/html; charset=utf-8',
        body: '<!doctype html><title>Stripe test checkout</title><h1>Stripe test checkout</h1><p>A stand-in for Stripe’s payment page.</p>',
      };
    }
    return { status: 404, body: { error: { type: 'invalid_request_error', message: `Unrecognized request URL (${req.method}: ${url.pathname})` } } };
  }

  /** The form fields of the recorded requests to one path. */
  calls(method: string, path: string | RegExp): URLSearchParams[] {
    return this.requests.filter((r) => r.method === method && (typeof path === 'string' ? r.path === path : path.test(r.path))).map((r) => r.form);
  }
}
