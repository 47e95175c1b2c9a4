import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import pino, { type Bindings, type ChildLoggerOptions, type Logger, type LoggerOptions } from 'pino';
import type { Config } from '../config.ts';

const REDACTED = '[REDACTED]';

/**
 * Headers that carry a secret: tokens travel in Authorization, sessions in Cookie and Set-Cookie.
 * Fastify's request line logs no header, but code that logs headers (while debugging, say) must not
 * write these either, at the top level or one level down (`{ headers }`, `{ req: { headers } }`).
 */
const SECRET_HEADERS = ['authorization', 'proxy-authorization', 'cookie', 'set-cookie', 'x-api-key', 'idempotency-key'];
const REDACT_PATHS = SECRET_HEADERS.flatMap((name) => {
  const key = `["${name}"]`;
  return [key, `headers${key}`, `*${key}`, `*.headers${key}`];
});

/**
 * Query parameter names whose value is a secret on any path: a reset link's `token` (also when the
 * link's path was altered, so the reset route's own quiet log level does not cover it), and a
 * token or password someone sent the wrong way.
 */
const SECRET_NAME = /token|authori[sz]ation|password|passwd|secret|api[-_]?key|^key$|session/i;
/** API, sandbox and operator tokens (`vh_live_...`, `vh_test_...`, `vh_op_...`) are recognisable wherever they are. */
const TOKEN_PREFIX = /vh_(?:live|test|op)_/i;

/**
 * Percent-decodes for matching only (twice-encoded too), byte by byte so that a malformed escape
 * cannot stop it: an attacker's `vh%5Flive%5F...` is a token all the same.
 */
function decodedForMatching(text: string): string {
  // Every request line passes here: most URLs hold no escape at all.
  if (!text.includes('%')) return text;
  let current = text;
  for (let round = 0; round < 3; round++) {
    const next = current.replace(/%([0-9a-f]{2})/gi, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
    if (next === current) break;
    current = next;
  }
  return current;
}

function holdsToken(text: string): boolean {
  return TOKEN_PREFIX.test(decodedForMatching(text));
}

/** `name=value` pairs separated by `&`, `;` or `?`: a secret name hides its value, a token hides the pair. */
function redactPairs(text: string): string {
  return text
    .split(/([&;?])/)
    .map((part) => {
      if (part === '&' || part === ';' || part === '?') return part;
      const equals = part.indexOf('=');
      const name = equals < 0 ? part : part.slice(0, equals);
      if (holdsToken(name)) return REDACTED;
      if (equals < 0) return part;
      return SECRET_NAME.test(decodedForMatching(name)) || holdsToken(part.slice(equals + 1)) ? `${name}=${REDACTED}` : part;
    })
    .join('');
}

/**
 * The URL as it may be logged: the path and the endpoint's harmless parameters stay readable; every
 * API or operator token, in the path or the query, the value of every secret-named parameter
 * (`token=`, `authorization=`, ...) and the user information of an absolute-form target become
 * [REDACTED].
 */
export function redactUrl(target: string): string {
  const url = target.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/?#@]*@/i, `$1${REDACTED}@`);
  const split = url.search(/[?#]/);
  const path = split < 0 ? url : url.slice(0, split);
  const rest = split < 0 ? '' : url.slice(split + 1);
  const safePath = path
    .split('/')
    .map((segment) => (holdsToken(segment) ? REDACTED : segment.includes('=') ? redactPairs(segment) : segment))
    .join('/');
  if (split < 0) return safePath;
  return `${safePath}${url[split]}${rest.split('#').map(redactPairs).join('#')}`;
}

/** The same for free text (a log message, an error's message or stack), where a URL may sit among words. */
export function redactText(text: string): string {
  return text
    .replace(/(vh_(?:live|op)_)[0-9A-Za-z]+/gi, `$1${REDACTED}`)
    .replace(/([?&;#][^\s=&;#?]*=)[^\s&;#]*/g, (pair, head: string) => (SECRET_NAME.test(decodedForMatching(head)) ? `${head}${REDACTED}` : pair));
}

interface LoggedRequest {
  method?: string;
  url?: string;
  headers?: IncomingHttpHeaders;
  host?: string;
  ip?: string;
  socket?: { remotePort?: number };
}

/** Fastify's request line, with the URL redacted. */
function serializeRequest(request: LoggedRequest) {
  return {
    method: request.method,
    url: typeof request.url === 'string' ? redactUrl(request.url) : undefined,
    version: request.headers?.['accept-version'],
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  };
}

function serializeError(error: Error) {
  const serialized = pino.stdSerializers.err(error);
  if (typeof serialized?.message === 'string') serialized.message = redactText(serialized.message);
  if (typeof serialized?.stack === 'string') serialized.stack = redactText(serialized.stack);
  return serialized;
}

/**
 * What may reach a log line: no header that carries a secret, no token or secret parameter in a
 * URL, in a message or in an error. Bodies are never logged.
 */
export function loggerOptions(config: Pick<Config, 'logLevel'>): LoggerOptions {
  return {
    level: config.logLevel,
    redact: { paths: REDACT_PATHS, censor: REDACTED },
    serializers: {
      req: serializeRequest,
      res: (reply: { statusCode?: number }) => ({ statusCode: reply.statusCode }),
      err: serializeError,
    },
    hooks: {
      logMethod(args, method) {
        method.apply(this, args.map((arg) => (typeof arg === 'string' ? redactText(arg) : arg)) as Parameters<typeof method>);
      },
    },
  };
}

export function createLogger(config: Pick<Config, 'logLevel'>): Logger {
  return pino(loggerOptions(config));
}

const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const;
type Level = (typeof LEVELS)[number];

/**
 * Fastify's childLoggerFactory: the request's logger, made a pino child only when a line at an
 * enabled level is written to it. Fastify makes a child per request (bound to the request id), and
 * with redaction on pino runs the bindings through the redactor at once: 7-10 µs of a search's CPU
 * (docs/benchmarks.md, "Measured choices on the search path") for a logger that, at the usual
 * levels, a request seldom writes to.
 */
export function lazyRequestLogger(parent: Logger, bindings: Bindings, options: ChildLoggerOptions): Logger {
  // Fastify's own no-op logger (`logger: false`) has no levels to check: it is cheap as it is.
  if (parent.levels === undefined) return parent.child(bindings, options);
  let child: Logger | null = null;
  const real = (): Logger => (child ??= parent.child(bindings, options));
  // A route's own logLevel (`logLevel: 'warn'`) comes as options.level.
  const threshold = (): number => parent.levels.values[child?.level ?? options.level ?? parent.level] ?? 0;
  const lazy = {
    get level(): string {
      return child?.level ?? options.level ?? parent.level;
    },
    set level(level: string) {
      real().level = level;
    },
    child: (more: Bindings, moreOptions?: ChildLoggerOptions) => real().child(more, moreOptions),
    silent: () => {},
    isLevelEnabled: (level: string) => (parent.levels.values[level] ?? Infinity) >= threshold(),
  } as Record<string, unknown>;
  for (const level of LEVELS) {
    const value = parent.levels.values[level]!;
    lazy[level] = (...args: unknown[]) => {
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- tsc needs it (without it: TS2556, the spread has no tuple type).
      if (value >= threshold()) (real()[level as Level] as (...a: unknown[]) => void)(...args);
    };
  }
  return lazy as unknown as Logger;
}

/** A request id a client or load balancer may choose: short, visible ASCII, nothing to inject into a log or header. */
const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/** The client's X-Request-Id when it is a plain id, so that a trace spans the load balancer; a fresh UUID otherwise. */
export function requestIdFrom(headers: IncomingHttpHeaders): string {
  const given = headers['x-request-id'];
  return typeof given === 'string' && CLIENT_REQUEST_ID.test(given) ? given : randomUUID();
}
