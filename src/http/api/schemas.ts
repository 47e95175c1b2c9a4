import { Type } from '@sinclair/typebox';
import type { FastifySchemaValidationError } from 'fastify';
import { API_ERRORS, PUBLIC_ERROR_CODES, type ErrorKind, type PublicErrorCode } from '../../errors.ts';

export const ErrorSchema = Type.Object(
  {
    code: Type.Optional(
      Type.Unsafe<PublicErrorCode>({
        type: 'string',
        enum: PUBLIC_ERROR_CODES,
        description: 'What went wrong, for a program: one of a closed set (docs/api.md lists each with what to do). Absent only from the 401, whose body is exactly {"message":"Unauthenticated."}.',
      }),
    ),
    message: Type.String({ description: 'What went wrong, for a human.' }),
    errors: Type.Optional(
      Type.Record(Type.String(), Type.Array(Type.String()), {
        description: 'Validation failures (422 only): field name to messages.',
      }),
    ),
  },
  { $id: 'Error', title: 'Error' },
);

/** The codes of some error kinds, as a response description says them. */
export function codesSentence(kinds: readonly ErrorKind[]): string {
  const codes = [...new Set(kinds.map((kind) => API_ERRORS[kind].code).filter((code) => code !== null))];
  if (codes.length === 0) return 'No code.';
  return `${codes.length === 1 ? 'Code' : 'Codes'}: ${codes.map((code) => `\`${code}\``).join(', ')}.`;
}

/** An error response: its description ends with the codes its body may carry (errors.ts). */
export const errorRef = (kinds: ErrorKind | readonly ErrorKind[], description: string, headers?: Record<string, HeaderDoc>) => {
  const full = `${description} ${codesSentence(typeof kinds === 'string' ? [kinds] : kinds)}`;
  return Type.Ref(ErrorSchema, headers ? { description: full, headers } : { description: full });
};

/** A response header as the route schemas document it (@fastify/swagger turns it into an OpenAPI header). */
export interface HeaderDoc {
  type: 'string' | 'integer';
  description: string;
  enum?: string[];
}

/** The bearer challenge of every 401 (RFC 6750), from http/plugins/bearer-challenge.ts. */
export const wwwAuthenticateHeader = (realm: string): Record<string, HeaderDoc> => ({
  'WWW-Authenticate': {
    type: 'string',
    description: `The Bearer challenge: \`Bearer realm="${realm}"\`, with \`error="invalid_token"\` when a token was sent and refused.`,
  },
});

export const retryAfterHeader: Record<string, HeaderDoc> = {
  'Retry-After': { type: 'integer', description: 'Seconds to wait before retrying.' },
};

/** The error statuses every authenticated API route can answer with. */
export const authErrorResponses = {
  401: errorRef('UNAUTHENTICATED', 'Authorization missing, malformed, unknown or revoked. Body is exactly {"message":"Unauthenticated."}.', wwwAuthenticateHeader('vinhistory')),
  402: errorRef('SUBSCRIPTION_REQUIRED', 'The token is valid but its account has no active subscription.'),
  503: errorRef(
    'DATABASE_BUSY', 'The database is busy (an import holds its write lock, or a lock or serialization conflict); nothing was counted. Try again after Retry-After.',
    retryAfterHeader,
  ),
  '5xx': errorRef('INTERNAL', 'A fault of the service. The message carries a request id and no internals.'),
};

export const SEARCH_NO_RECORDS = 'The VIN is valid but no auction record is known for it. Counts against the quota.';
export const SEARCH_LIMITED = 'Per-second rate exceeded (`rate_limited`) or monthly quota used up (`quota_exceeded`). See Retry-After.';

export const searchErrorResponses = {
  ...authErrorResponses,
  404: errorRef('NO_RECORDS', SEARCH_NO_RECORDS),
  413: errorRef('PAYLOAD_TOO_LARGE', 'Request body too large (POST only; the limit is 4 KiB).'),
  422: errorRef(['VALIDATION_FAILED', 'IDEMPOTENCY_CONFLICT'], 'vin missing or malformed (errors.vin says what is wrong), a malformed Idempotency-Key, or one used for another VIN in the last 24 hours.'),
  429: errorRef(['RATE_LIMITED', 'QUOTA_EXCEEDED'], SEARCH_LIMITED),
};

/** What a route that reads a JSON body answers when the body cannot be read as JSON. */
export const jsonBodyErrorResponses = {
  400: errorRef('BAD_REQUEST', 'The body is not valid JSON.'),
  415: errorRef('UNSUPPORTED_MEDIA_TYPE', 'The Content-Type is not application/json.'),
};

/**
 * Whether a route's schema errors are all ones its service words better (a VIN's length, which
 * characters, a lot id's range): each at one of `paths` by one of `keywords`, or anywhere under the
 * body's `oneOf` (which fields go together). The document states those bounds so that a client
 * and a validating proxy know them; the service's 422 says what is wrong in the customer's terms.
 */
export function leftToTheService(
  error: Error & { validation?: FastifySchemaValidationError[] },
  paths: readonly string[],
  keywords: readonly string[] = ['pattern', 'minLength', 'maxLength', 'minimum', 'maximum'],
): boolean {
  return (error.validation ?? []).every(
    ({ instancePath, keyword, schemaPath }) => (paths.includes(instancePath) && keywords.includes(keyword)) || schemaPath.startsWith('#/oneOf'),
  );
}

/** A cursor as the API gives it (base64url of a position, domain/watch.ts decodeCursor): anything else is 422. */
export const CURSOR_PATTERN = '^[A-Za-z0-9_-]+$';
export const MAX_CURSOR_CHARS = 200;
