import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'vinhistory-signature';
export const EVENT_ID_HEADER = 'vinhistory-event-id';
export const SECRET_PREFIX = 'whsec_';

/** A new endpoint secret: `whsec_` and 192 random bits in base64url. */
export function newWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(24).toString('base64url')}`;
}

/** What the account shows of a secret: enough to tell two apart, useless to sign. */
export function secretHint(secret: string): string {
  return `${secret.slice(0, SECRET_PREFIX.length + 4)}…`;
}

/** HMAC-SHA256 of `<t>.<body>`, keyed by the whole secret string (prefix included), in hex. */
export function signatureOf(secret: string, timestamp: number, body: string): string {
  return createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');
}

/**
 * The Vinhistory-Signature header: `t=<unix seconds>,v1=<hex>`, with one v1 per secret that signs
 * (two during a rotation's grace period, newest first), as Stripe does: a receiver that knows
 * either secret accepts the delivery.
 */
export function signatureHeader(secrets: readonly string[], timestamp: number, body: string): string {
  return [`t=${timestamp}`, ...secrets.map((secret) => `v1=${signatureOf(secret, timestamp, body)}`)].join(',');
}

/**
 * A receiver's check, the same one docs/webhooks.md shows: some v1 matches and the timestamp is
 * within `toleranceSeconds` of now (a replayed old delivery is refused).
 */
export function verifySignature(header: string, body: string, secret: string, nowSeconds: number, toleranceSeconds = 300): boolean {
  let timestamp: number | null = null;
  const candidates: string[] = [];
  for (const part of header.split(',')) {
    const [key, value] = part.split('=', 2);
    if (key === 't' && value && /^\d+$/.test(value)) timestamp = Number(value);
    else if (key === 'v1' && value) candidates.push(value);
  }
  if (timestamp === null || Math.abs(nowSeconds - timestamp) > toleranceSeconds) return false;
  const expected = Buffer.from(signatureOf(secret, timestamp, body), 'hex');
  return candidates.some((candidate) => {
    const given = Buffer.from(candidate, 'hex');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
