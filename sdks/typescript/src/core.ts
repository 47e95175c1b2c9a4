import { apiErrorFor, VinhistoryApiError, VinhistoryConnectionError, VinhistoryTimeoutError } from './errors.ts';
import type { ErrorCode } from './generated/types.ts';

export const SDK_VERSION = '1.0.0';

export interface ClientOptions {
  /** An API token: `vh_live_...`, or a sandbox token `vh_test_...`. */
  token: string;
  /** The service's address, e.g. `https://api.example.com` (no `/api/v1`). */
  baseUrl: string;
  /** Per attempt; 30 s unless given. */
  timeoutMs?: number;
  /** Retries of a 429 or 503 answer, after its Retry-After; 2 unless given, 0 turns retrying off. */
  maxRetries?: number;
  /**
   * The longest Retry-After waited for (30 s unless given). A longer one (a monthly quota used up
   * answers the time until the period resets) is thrown at once as the RateLimitError it is.
   */
  maxRetryDelayMs?: number;
  /** Sent with every request. */
  headers?: Record<string, string>;
  /** The fetch to use; the global one unless given. */
  fetch?: typeof fetch;
  /** How to wait between attempts (tests pass a fake). */
  sleep?: (ms: number) => Promise<void>;
}

export interface RequestOptions {
  timeoutMs?: number;
  maxRetries?: number;
  /**
   * Retry a 429 or 503 of this call. By default every free call is retried; a counted call only
   * when it carries an Idempotency-Key, so that a retry can never be counted twice.
   */
  retry?: boolean;
  signal?: AbortSignal;
  headers?: Record<string, string>;
  /** Called with every answer (each attempt): its status and headers (`RateLimit`, `X-Request-Id`, ...). */
  onResponse?: (response: ResponseInfo) => void;
}

export interface ResponseInfo {
  status: number;
  headers: Headers;
  /** 0 for the first attempt, 1 for the first retry, ... */
  attempt: number;
}

/** One operation's request, as the generated client describes it. */
export interface CallSpec {
  method: string;
  /** The document's path, with `{name}` for each path parameter. */
  path: string;
  pathParams?: Record<string, unknown>;
  query?: Record<string, unknown>;
  headers?: Record<string, unknown>;
  body?: unknown;
  /** The media type a string body is sent as (`text/csv`); any other body is JSON. */
  textMediaType?: string;
  counted: boolean;
  answer: 'json' | 'ndjson' | 'text' | 'empty';
}

const RETRIED = new Set([429, 503]);

/** `Retry-After` in seconds: a number of seconds, or an HTTP date. */
export function retryAfterSeconds(value: string | null, now = Date.now()): number | null {
  if (value === null || value.trim() === '') return null;
  if (/^\s*\d+\s*$/.test(value)) return Number(value);
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, Math.ceil((date - now) / 1000));
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
/** A parameter's text: parameters are strings, numbers and booleans; anything else is refused, not sent as "[object Object]". */
function scalar(value: unknown): string {
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  throw new TypeError(`a parameter must be a string, number or boolean, not ${JSON.stringify(value)}`);
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The transport under the generated client: URLs, headers, the bounded retry, errors, answers. */
export class ClientCore {
  readonly baseUrl: string;
  private readonly token: string;
  private readonly timeoutMs: number;
  private readonly maxRetries: number;
  private readonly maxRetryDelayMs: number;
  private readonly headers: Record<string, string>;
  private readonly fetch: typeof fetch;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(options: ClientOptions) {
    if (!options.token) throw new TypeError('token is required: an API token from the account (vh_live_... or vh_test_...)');
    if (!/^https?:\/\//i.test(options.baseUrl ?? '')) throw new TypeError('baseUrl must be an http(s) URL, e.g. https://api.example.com');
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.token = options.token;
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.maxRetries = options.maxRetries ?? 2;
    this.maxRetryDelayMs = options.maxRetryDelayMs ?? 30_000;
    this.headers = options.headers ?? {};
    this.fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.sleep = options.sleep ?? defaultSleep;
  }

  /** The URL of a call: path parameters encoded into the path, the query without absent values. */
  protected urlOf(spec: CallSpec): string {
    const path = spec.path.replace(/\{([^}]+)\}/g, (_match, name: string) => {
      const value = spec.pathParams?.[name];
      if (value === undefined || value === null || value === '') throw new TypeError(`${spec.method} ${spec.path}: the path parameter ${name} is required`);
      return encodeURIComponent(scalar(value));
    });
    const query = new URLSearchParams();
    for (const [name, value] of Object.entries(spec.query ?? {})) {
      if (value === undefined || value === null) continue;
      for (const one of Array.isArray(value) ? (value as unknown[]) : [value]) query.append(name, scalar(one));
    }
    const search = query.toString();
    return `${this.baseUrl}${path}${search ? `?${search}` : ''}`;
  }

  protected async call<T>(spec: CallSpec, options: RequestOptions = {}): Promise<T> {
    const headers = new Headers({ 'user-agent': `vinhistory-typescript/${SDK_VERSION}`, accept: 'application/json', ...this.headers, ...options.headers });
    headers.set('authorization', this.token);
    for (const [name, value] of Object.entries(spec.headers ?? {})) {
      if (value !== undefined && value !== null) headers.set(name, scalar(value));
    }
    let body: string | undefined;
    if (spec.body !== undefined) {
      if (typeof spec.body === 'string' && spec.textMediaType) {
        body = spec.body;
        headers.set('content-type', spec.textMediaType);
      } else {
        body = JSON.stringify(spec.body);
        headers.set('content-type', 'application/json');
      }
    }
    const mayRetry = options.retry ?? (!spec.counted || headers.has('idempotency-key'));
    const maxRetries = mayRetry ? (options.maxRetries ?? this.maxRetries) : 0;
    const url = this.urlOf(spec);
    for (let attempt = 0; ; attempt++) {
      const response = await this.send(url, { method: spec.method, headers, ...(body !== undefined ? { body } : {}) }, options);
      options.onResponse?.({ status: response.status, headers: response.headers, attempt });
      if (response.ok) return (await this.read(response, spec.answer)) as T;
      const error = await this.errorOf(response);
      if (RETRIED.has(response.status) && attempt < maxRetries) {
        const delayMs = error.retryAfter !== null ? error.retryAfter * 1000 : Math.min(8_000, 500 * 2 ** attempt) * (0.5 + Math.random() / 2);
        if (delayMs <= this.maxRetryDelayMs) {
          await this.sleep(delayMs);
          continue;
        }
      }
      throw error;
    }
  }

  private async send(url: string, init: RequestInit, options: RequestOptions): Promise<Response> {
    const timeoutMs = options.timeoutMs ?? this.timeoutMs;
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    const forward = () => controller.abort(options.signal?.reason);
    if (options.signal?.aborted) forward();
    options.signal?.addEventListener('abort', forward, { once: true });
    try {
      return await this.fetch(url, { ...init, signal: controller.signal });
    } catch (cause) {
      if (timedOut) throw new VinhistoryTimeoutError(timeoutMs, { cause });
      if (options.signal?.aborted) throw cause;
      throw new VinhistoryConnectionError(`${init.method} ${url}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', forward);
    }
  }

  private async read(response: Response, answer: CallSpec['answer']): Promise<unknown> {
    if (response.status === 204 || answer === 'empty') {
      await response.body?.cancel();
      return undefined;
    }
    // The answer's own Content-Type decides, the document's media type only when it names none:
    // a caller who asks for another representation (`Accept: text/csv`) gets it as text.
    const type = (response.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    const kind = type === 'application/x-ndjson' || type === 'application/jsonl' ? 'ndjson' : type === 'application/json' || type.endsWith('+json') ? 'json' : type ? 'text' : answer;
    const text = await response.text();
    if (kind === 'text') return text;
    if (kind === 'ndjson') return text.split('\n').filter((line) => line.trim() !== '').map((line) => JSON.parse(line) as unknown);
    return JSON.parse(text) as unknown;
  }

  private async errorOf(response: Response): Promise<VinhistoryApiError> {
    const text = await response.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // A proxy's HTML or plain-text error page: the text is kept as the body.
    }
    const fields = isObject(body) ? body : {};
    const errors = isObject(fields.errors) ? (fields.errors as Record<string, string[]>) : null;
    return apiErrorFor({
      status: response.status,
      code: typeof fields.code === 'string' ? (fields.code as ErrorCode) : null,
      message: typeof fields.message === 'string' ? fields.message : `HTTP ${response.status}${text ? `: ${text.slice(0, 200)}` : ''}`,
      errors,
      requestId: response.headers.get('x-request-id'),
      retryAfter: retryAfterSeconds(response.headers.get('retry-after')),
      headers: response.headers,
      body,
    });
  }
}
