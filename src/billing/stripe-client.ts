import Stripe from 'stripe';

export interface StripeApiBase {
  host: string;
  port: number;
  protocol: 'http' | 'https';
}

/**
 * The official client. `apiBase` points it elsewhere than api.stripe.com: tests give it a local
 * stand-in, as they cannot reach Stripe. Webhook signatures need no client call at all.
 */
export function createStripeClient(secretKey: string, apiBase?: StripeApiBase): Stripe {
  return new Stripe(secretKey, {
    maxNetworkRetries: 2,
    timeout: 20_000,
    appInfo: { name: 'vinhistory' },
    ...(apiBase ? { host: apiBase.host, port: apiBase.port, protocol: apiBase.protocol } : {}),
  });
}
