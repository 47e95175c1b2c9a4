import { lookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';

/**
 * Where the service may send a request a customer or a feed gave it (webhook deliveries, photo
 * fetches): only to public addresses over https, unless the operator says otherwise. A URL's name
 * proves nothing (`evil.example` may resolve to 127.0.0.1), so the address is checked again when
 * the connection is made; see outbound-client.ts.
 */
export interface OutboundPolicy {
  /** OUTBOUND_ALLOW_PRIVATE=true: loopback, link-local and private addresses allowed (tests, private networks). */
  readonly allowPrivate: boolean;
  /** Plain http:// allowed: outside production, or with allowPrivate. */
  readonly allowPlainHttp: boolean;
}

export function outboundPolicy(options: { allowPrivate: boolean; isProduction: boolean }): OutboundPolicy {
  return Object.freeze({ allowPrivate: options.allowPrivate, allowPlainHttp: options.allowPrivate || !options.isProduction });
}

/**
 * True for an address on the public internet. Everything ipaddr.js does not call plain unicast is
 * refused: loopback, private and unique-local, link-local (cloud metadata at 169.254.169.254),
 * carrier-grade NAT, multicast, reserved, documentation and the unspecified address. An IPv6 form of
 * an IPv4 address is judged by the IPv4 address inside it where one can be read (IPv4-mapped,
 * ::ffff:10.0.0.1, and the deprecated IPv4-compatible ::/96, ::10.0.0.1 or ::a00:1, which ipaddr.js
 * calls plain unicast and which some stacks still route to the IPv4 host), and refused otherwise
 * (NAT64, 6to4, Teredo).
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6') {
    const v6 = parsed as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress() || isIPv4Compatible(v6)) parsed = ipaddr.fromByteArray(v6.toByteArray().slice(12));
    else if (v6.range() !== 'unicast') return false;
  }
  return parsed.range() === 'unicast';
}

/** The IPv4-compatible block ::/96; `::` and `::1` in it read as 0.0.0.0 and 0.0.0.1, refused like any of 0.0.0.0/8. */
function isIPv4Compatible(address: ipaddr.IPv6): boolean {
  return address.parts.slice(0, 6).every((part) => part === 0);
}

export type UrlCheck =
  | { readonly ok: true; readonly url: URL }
  | { readonly ok: false; readonly reason: string };

/** The checks that can be made before any name is resolved: scheme, credentials, a literal address. */
export function checkOutboundUrl(input: string | URL, policy: OutboundPolicy): UrlCheck {
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    return { ok: false, reason: 'not an absolute URL' };
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && policy.allowPlainHttp)) {
    return { ok: false, reason: policy.allowPlainHttp ? 'only http:// and https:// URLs are allowed' : 'only https:// URLs are allowed' };
  }
  if (url.username !== '' || url.password !== '') return { ok: false, reason: 'URLs with a user name or password are not allowed' };
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (ipaddr.isValid(host) && !policy.allowPrivate && !isPublicAddress(host)) {
    return { ok: false, reason: `${host} is not a public address` };
  }
  return { ok: true, url };
}

/** How long a name's check when a URL is set may wait for DNS before it lets the URL through. */
const NAME_CHECK_TIMEOUT_MS = 3_000;

/**
 * When a URL is saved (a webhook endpoint): whether its name resolves to an address the policy
 * refuses (`localhost`, a name pointing at 10.0.0.5), so that the operator's customer hears it at
 * once instead of from every delivery failing. A name that does not resolve, or not in time, passes:
 * that says nothing about where it will point, and each connection is checked again anyway.
 */
export async function checkOutboundName(url: URL, policy: OutboundPolicy, resolve: (host: string) => Promise<string[]> = resolveAll): Promise<UrlCheck> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (policy.allowPrivate || ipaddr.isValid(host)) return { ok: true, url };
  let timer: NodeJS.Timeout | undefined;
  const addresses = await Promise.race([
    resolve(host).catch(() => [] as string[]),
    new Promise<string[]>((done) => (timer = setTimeout(() => done([]), NAME_CHECK_TIMEOUT_MS))),
  ]).finally(() => clearTimeout(timer));
  const refused = addresses.find((address) => !isPublicAddress(address));
  return refused === undefined ? { ok: true, url } : { ok: false, reason: `${host} resolves to ${refused}, which is not a public address` };
}

async function resolveAll(host: string): Promise<string[]> {
  return (await lookup(host, { all: true, verbatim: true })).map((entry) => entry.address);
}
