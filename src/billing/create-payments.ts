import type Stripe from 'stripe';
import type { Config } from '../config.ts';
import type { Db } from '../storage/database.ts';
import type { Repositories } from '../storage/repositories/index.ts';
import { BillingService } from './billing-service.ts';
import { ManualPaymentProvider } from './manual-provider.ts';
import { createStripeClient, stripeApiBaseOf, type StripeApiBase } from './stripe-client.ts';
import { StripePaymentProvider } from './stripe-provider.ts';

export interface PaymentsSetup {
  billing: BillingService;
  /** The provider new subscriptions go through. */
  checkoutProvider: 'manual' | 'stripe';
  /** Set when Stripe is configured: the client and the webhook signing secret. */
  stripe: { client: Stripe; webhookSecret: string | null } | null;
}

export interface PaymentsOptions {
  config: Config;
  db: Db;
  repos: Repositories;
  /** Where Stripe's checkout returns the customer to, under PUBLIC_BASE_URL. */
  returnPath: string;
  /** Tests: a Stripe client of their own, or the address of a local stand-in for Stripe's API. */
  stripeClient?: Stripe;
  stripeApiBase?: StripeApiBase;
}

/** Manual invoices always (they may be open from before Stripe was set up); Stripe when configured. */
export function createPayments(options: PaymentsOptions): PaymentsSetup {
  const { config, db, repos } = options;
  const manual = new ManualPaymentProvider(db);
  if (!config.stripe) {
    return { billing: new BillingService({ db, repos, checkout: manual, providers: { manual } }), checkoutProvider: 'manual', stripe: null };
  }
  const apiBase = options.stripeApiBase ?? (config.stripe.apiUrl ? stripeApiBaseOf(config.stripe.apiUrl) : undefined);
  const client = options.stripeClient ?? createStripeClient(config.stripe.secretKey, apiBase);
  const stripe = new StripePaymentProvider({ stripe: client, db, repos, publicBaseUrl: config.publicBaseUrl, returnPath: options.returnPath });
  return {
    billing: new BillingService({ db, repos, checkout: stripe, providers: { manual, stripe } }),
    checkoutProvider: 'stripe',
    stripe: { client, webhookSecret: config.stripe.webhookSecret },
  };
}
