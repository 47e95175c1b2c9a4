/**
 * The check of a webhook delivery's `Vinhistory-Signature` (docs/webhooks.md): `t=<unix
 * seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`, keyed by the whole secret (`whsec_...`),
 * one `v1` per signing secret during a rotation. Web Crypto, so it runs in Node.js 20+, Deno,
 * Bun, edge runtimes and browsers alike; its verify compares in constant time.
 */

export const SIGNATURE_HEADER = 'Vinhistory-Signature';
export const EVENT_ID_HEADER = 'Vinhistory-Event-Id';

export interface VerifyOptions {
  /** How far `t` may be from now, in seconds (300 unless given): an old delivery replayed is refused. */
  toleranceSeconds?: number;
  /** Now, in Unix seconds (tests). */
  nowSeconds?: number;
}

/** An event as the service delivers it. `data` depends on `type` (docs/webhooks.md, "Events"). */
export interface WebhookEvent {
  id: string;
  type: string;
  created_at: string;
  data: Record<string, unknown>;
}

export class WebhookSignatureError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookSignatureError';
  }
}

const encoder = new TextEncoder();

function hexBytes(hex: string): ArrayBuffer | null {
  if (!/^(?:[0-9a-f]{2})+$/i.test(hex)) return null;
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return bytes.buffer;
}

/**
 * True when some `v1` of the header is the signature of `rawBody` by `secret` and `t` is within
 * the tolerance. Pass the body exactly as received (a string or its bytes), before any JSON parsing.
 */
export async function verifyWebhookSignature(header: string, rawBody: string | Uint8Array, secret: string, options: VerifyOptions = {}): Promise<boolean> {
  let timestamp: number | null = null;
  const signatures: ArrayBuffer[] = [];
  for (const part of header.split(',')) {
    const at = part.indexOf('=');
    if (at < 0) continue;
    const name = part.slice(0, at).trim();
    const value = part.slice(at + 1).trim();
    if (name === 't' && /^\d+$/.test(value)) timestamp = Number(value);
    else if (name === 'v1') {
      const bytes = hexBytes(value);
      if (bytes) signatures.push(bytes);
    }
  }
  const now = options.nowSeconds ?? Math.floor(Date.now() / 1000);
  if (timestamp === null || Math.abs(now - timestamp) > (options.toleranceSeconds ?? 300)) return false;
  const key = await crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
  const body = typeof rawBody === 'string' ? encoder.encode(rawBody) : rawBody;
  const prefix = encoder.encode(`${timestamp}.`);
  const signed = new Uint8Array(prefix.length + body.length);
  signed.set(prefix);
  signed.set(body, prefix.length);
  for (const signature of signatures) {
    if (await crypto.subtle.verify('HMAC', key, signature, signed)) return true;
  }
  return false;
}

/** The event of a delivery whose signature holds; throws WebhookSignatureError otherwise. */
export async function parseWebhookEvent(header: string | null | undefined, rawBody: string | Uint8Array, secret: string, options: VerifyOptions = {}): Promise<WebhookEvent> {
  if (!header) throw new WebhookSignatureError(`no ${SIGNATURE_HEADER} header`);
  if (!(await verifyWebhookSignature(header, rawBody, secret, options))) throw new WebhookSignatureError('the signature does not match, or its timestamp is too old');
  const text = typeof rawBody === 'string' ? rawBody : new TextDecoder().decode(rawBody);
  return JSON.parse(text) as WebhookEvent;
}
