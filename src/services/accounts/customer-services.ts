import type Stripe from 'stripe';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../../config.ts';
import type { Db } from '../../db/database.ts';
import type { Repositories } from '../../repositories/index.ts';
import { createMailSender } from '../mail/create-mail-sender.ts';
import type { MailSender } from '../mail/mail-sender.ts';
import { createPayments, type PaymentsSetup } from '../payments/create-payments.ts';
import type { StripeApiBase } from '../payments/stripe-client.ts';
import { StripeWebhookHandler } from '../payments/stripe-webhooks.ts';
import { AccountAuthService } from './account-auth-service.ts';
import { PasswordHasher, type ScryptCost } from './password-hasher.ts';
import { SessionService } from './session-service.ts';

/** Paths of the pages that mail and Stripe send customers back to. */
export const RESET_PASSWORD_PATH = '/reset-password';
export const BILLING_PATH = '/account/billing';

/** How long a rotated token keeps working next to its successor. */
export const TOKEN_ROTATION_GRACE_MS = 24 * 60 * 60 * 1000;

/** What tests (and only tests) replace: an outside service, or the cost of a password hash. */
export interface CustomerServicesOverrides {
  mailer?: MailSender;
  stripeClient?: Stripe;
  stripeApiBase?: StripeApiBase;
  /** The origin of Stripe's checkout pages, allowed as a form target by the pages' CSP. */
  stripeCheckoutOrigin?: string;
  passwordCost?: ScryptCost;
}

export interface CustomerServices {
  hasher: PasswordHasher;
  sessions: SessionService;
  auth: AccountAuthService;
  mailer: MailSender;
  payments: PaymentsSetup;
  stripeWebhooks: StripeWebhookHandler | null;
  stripeCheckoutOrigin: string;
  close(): Promise<void>;
}

/** The services behind the personal account's pages and the payment webhooks, built once per app. */
export function createCustomerServices(input: {
  config: Config;
  db: Db;
  repos: Repositories;
  log: FastifyBaseLogger;
  overrides?: CustomerServicesOverrides;
}): CustomerServices {
  const { config, db, repos, log } = input;
  const overrides = input.overrides ?? {};
  const hasher = new PasswordHasher(overrides.passwordCost);
  const sessions = new SessionService(repos);
  const mailer = overrides.mailer ?? createMailSender(config, log);
  const auth = new AccountAuthService({ db, repos, hasher, sessions, mailer, publicBaseUrl: config.publicBaseUrl, resetPath: RESET_PASSWORD_PATH, log });
  const payments = createPayments({
    config,
    db,
    repos,
    returnPath: BILLING_PATH,
    ...(overrides.stripeClient ? { stripeClient: overrides.stripeClient } : {}),
    ...(overrides.stripeApiBase ? { stripeApiBase: overrides.stripeApiBase } : {}),
  });
  return {
    hasher,
    sessions,
    auth,
    mailer,
    payments,
    stripeWebhooks: payments.stripe ? new StripeWebhookHandler(db, log) : null,
    stripeCheckoutOrigin: overrides.stripeCheckoutOrigin ?? 'https://checkout.stripe.com',
    close: () => mailer.close(),
  };
}
