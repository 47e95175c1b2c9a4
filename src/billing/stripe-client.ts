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

/** STRIPE_API_URL (`http://127.0.0.1:12111`) as the client's host, port and protocol. */
export function stripeApiBaseOf(url: string): StripeApiBase {
  const parsed = new URL(url);
  const protocol = parsed.protocol === 'http:' ? 'http' : 'https';
  return { host: parsed.hostname, port: parsed.port ? Number(parsed.port) : protocol === 'http' ? 80 : 443, protocol };
}
