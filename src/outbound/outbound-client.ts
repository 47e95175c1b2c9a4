import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import type { Readable } from 'node:stream';
import { Agent, errors as undiciErrors, request } from 'undici';
import { checkOutboundUrl, isPublicAddress, type OutboundPolicy } from './outbound-policy.ts';

export type OutboundFailure = 'refused' | 'timeout' | 'too-large' | 'too-many-redirects' | 'network';

/** A request that did not get an answer, and why, in words safe to show the customer. */
export class OutboundError extends Error {
  constructor(
    readonly failure: OutboundFailure,
    message: string,
  ) {
    super(message);
    this.name = 'OutboundError';
  }
}

export interface OutboundRequest {
  readonly method?: 'GET' | 'HEAD' | 'POST';
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string | Buffer;
  /** For the whole exchange, redirects included. */
  readonly timeoutMs: number;
  /** The body is read up to this many bytes; a longer one fails as too-large. */
  readonly maxBytes: number;
  /** Redirects followed (each hop checked as the first was); 0 answers the 3xx itself. */
  readonly maxRedirects?: number;
}

export interface OutboundResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: Buffer;
  /** Where the answer came from, after redirects. */
  readonly url: string;
}

/** A download read as it arrives (a feed's file): bounded by time to the headers and between chunks, not in total. */
export interface OutboundStreamRequest {
  readonly headers?: Readonly<Record<string, string>>;
  /** Until the answer's headers arrive. */
  readonly headersTimeoutMs: number;
  /** Between two chunks of the body: a server that stops sending fails as a timeout. */
  readonly idleTimeoutMs: number;
  readonly maxRedirects?: number;
  /** Stops the exchange (a lease lost, a shutdown). */
  readonly signal?: AbortSignal;
}

export interface OutboundStreamResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The body as it arrives; the caller reads it whole or destroys it. */
  readonly body: Readable;
  readonly url: string;
}

const REFUSED = 'EOUTBOUNDREFUSED';

/**
 * Resolves a name and refuses the connection when any of its addresses is not public: connecting
 * to the address that was checked, not resolving twice, is what stops a name that answers a public
 * address to the check and a private one to the connection.
 */
export function guardedLookup(policy: OutboundPolicy): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, '', 0);
      const refused = policy.allowPrivate ? undefined : addresses.find((entry) => !isPublicAddress(entry.address));
      if (refused || addresses.length === 0) {
        const failure = Object.assign(new Error(`${hostname} resolves to ${refused?.address ?? 'no address'}, which is not a public address`), { code: REFUSED });
        return callback(failure, '', 0);
      }
      if (options.all) return (callback as unknown as (err: null, all: LookupAddress[]) => void)(null, addresses);
      callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
}

/**
 * The one way the service fetches a URL it was given. Every connection passes the policy's address
 * check, every redirect hop is checked again, and every exchange is bounded in time and size.
 */
export class OutboundClient {
  private readonly agent: Agent;

  constructor(
    private readonly policy: OutboundPolicy,
    private readonly userAgent = 'vinhistory',
  ) {
    this.agent = new Agent({ connect: { lookup: guardedLookup(policy) }, keepAliveTimeout: 4_000 });
  }

  /** The reason a URL would be refused before any connection, or null. */
  refusal(url: string): string | null {
    const check = checkOutboundUrl(url, this.policy);
    return check.ok ? null : check.reason;
  }

  async request(target: string, options: OutboundRequest): Promise<OutboundResponse> {
    const signal = AbortSignal.timeout(options.timeoutMs);
    let url = target;
    for (let hop = 0; ; hop += 1) {
      const check = checkOutboundUrl(url, this.policy);
      if (!check.ok) throw new OutboundError('refused', `${url}: ${check.reason}`);
      const answer = await this.once(check.url, options, signal);
      const location = answer.headers.location;
      if (answer.status >= 300 && answer.status < 400 && typeof location === 'string' && (options.maxRedirects ?? 0) > 0) {
        if (hop >= (options.maxRedirects ?? 0)) throw new OutboundError('too-many-redirects', `more than ${options.maxRedirects} redirects`);
        url = new URL(location, check.url).toString();
        continue;
      }
      return answer;
    }
  }

  /**
   * A GET whose body is read as it arrives, for downloads too large to hold (a feed's file): the
   * same address checks on every connection and redirect hop as request().
   */
  async stream(target: string, options: OutboundStreamRequest): Promise<OutboundStreamResponse> {
    let url = target;
    for (let hop = 0; ; hop += 1) {
      const check = checkOutboundUrl(url, this.policy);
      if (!check.ok) throw new OutboundError('refused', `${url}: ${check.reason}`);
      let answer: Awaited<ReturnType<typeof request>>;
      try {
        answer = await request(check.url, {
          dispatcher: this.agent,
          method: 'GET',
          headers: { 'user-agent': this.userAgent, ...options.headers },
          headersTimeout: options.headersTimeoutMs,
          bodyTimeout: options.idleTimeoutMs,
          ...(options.signal ? { signal: options.signal } : {}),
        });
      } catch (error) {
        throw toOutboundError(error, options.signal ?? new AbortController().signal);
      }
      const location = answer.headers.location;
      if (answer.statusCode >= 300 && answer.statusCode < 400 && typeof location === 'string' && (options.maxRedirects ?? 0) > 0) {
        // A redirect's body is not read; its abort must not surface as an error.
        answer.body.on('error', () => undefined);
        answer.body.destroy();
        if (hop >= (options.maxRedirects ?? 0)) throw new OutboundError('too-many-redirects', `more than ${options.maxRedirects} redirects`);
        url = new URL(location, check.url).toString();
        continue;
      }
      return { status: answer.statusCode, headers: answer.headers, body: answer.body, url: check.url.toString() };
    }
  }

  /** Why reading a stream()'s body failed, as an OutboundError. */
  static failureOf(error: unknown): OutboundError {
    return toOutboundError(error, new AbortController().signal);
  }

  private async once(url: URL, options: OutboundRequest, signal: AbortSignal): Promise<OutboundResponse> {
    try {
      const answer = await request(url, {
        dispatcher: this.agent,
        method: options.method ?? 'GET',
        headers: { 'user-agent': this.userAgent, ...options.headers },
        body: options.body,
        signal,
      });
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of answer.body) {
        size += (chunk as Buffer).length;
        if (size > options.maxBytes) {
          answer.body.destroy();
          throw new OutboundError('too-large', `the answer is larger than ${options.maxBytes} bytes`);
        }
        chunks.push(chunk as Buffer);
      }
      return { status: answer.statusCode, headers: answer.headers, body: Buffer.concat(chunks), url: url.toString() };
    } catch (error) {
      throw toOutboundError(error, signal);
    }
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}

function toOutboundError(error: unknown, signal: AbortSignal): OutboundError {
  if (error instanceof OutboundError) return error;
  if (signal.aborted) return new OutboundError('timeout', 'no complete answer in time');
  const code = (error as { code?: string }).code;
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  if (code === REFUSED || cause?.code === REFUSED) {
    return new OutboundError('refused', (cause?.code === REFUSED ? cause.message : (error as Error).message) ?? 'refused');
  }
  if (error instanceof undiciErrors.HeadersTimeoutError || error instanceof undiciErrors.BodyTimeoutError) {
    return new OutboundError('timeout', 'no complete answer in time');
  }
  return new OutboundError('network', code ? `network error (${code})` : `network error (${(error as Error).message})`);
}
