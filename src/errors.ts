/**
 * The closed set of errors the API can answer with, in this one table: each with its status and
 * the public `code` its body carries (lower snake case), what it means and what a client should do
 * (docs/api.md and the OpenAPI document are held to this table by tests). Every error body is
 * `{ code, message }`, plus `errors` (field -> messages) for a refused field; the 401 body alone is
 * `{ message }`, byte for byte as the contract fixes it.
 */
export const API_ERRORS = {
  BAD_REQUEST: {
    status: 400,
    code: 'bad_request',
    meaning: 'The request cannot be read: a body that is not valid JSON, an upload cut short, a malformed request line or header.',
    action: 'Fix the request; for an upload cut short, send the rest again (the message says what was stored).',
  },
  UNAUTHENTICATED: {
    status: 401,
    code: null,
    meaning: 'Authorization missing, malformed, unknown, revoked or expired. The body is exactly `{"message":"Unauthenticated."}`, with no code.',
    action: 'Send a valid token; make a new one in the personal account if it was revoked.',
  },
  SUBSCRIPTION_REQUIRED: {
    status: 402,
    code: 'subscription_required',
    meaning: 'The token is valid but its account has no subscription in force (expired, cancelled, unpaid).',
    action: 'Buy or renew a plan in the personal account; do not retry until then.',
  },
  LIVE_TOKEN_REQUIRED: {
    status: 403,
    code: 'live_token_required',
    meaning: 'A sandbox token (`vh_test_`) on an operation that acts on live data: watches and the webhook endpoint and its deliveries, the catalogue search and the market value.',
    action: 'Use a live token (`vh_live_`) of the account for these operations.',
  },
  NOT_FOUND: {
    status: 404,
    code: 'not_found',
    meaning: 'A resource of the account (a watch, the webhook endpoint, a delivered event) that it does not have.',
    action: 'Check the id; list the resources to find the right one.',
  },
  NO_RECORDS: {
    status: 404,
    code: 'no_records',
    meaning: 'A search by a valid VIN or lot found no auction record. Counted against the quota.',
    action: 'Nothing to retry: the vehicle has no known auction history (yet).',
  },
  ROUTE_NOT_FOUND: {
    status: 404,
    code: 'route_not_found',
    meaning: 'No API operation at this path.',
    action: 'Check the path against the API reference (the base URL and the `/api/v1/` prefix).',
  },
  METHOD_NOT_ALLOWED: {
    status: 405,
    code: 'method_not_allowed',
    meaning: 'The path exists, but not for this method.',
    action: 'Use one of the methods in the `Allow` header.',
  },
  WATCH_LIMIT_REACHED: {
    status: 409,
    code: 'watch_limit_reached',
    meaning: "The plan's watch limit is reached, or the account has no plan in force (which allows no watches); the message says which.",
    action: 'Delete a watch, or move to a larger plan.',
  },
  WEBHOOK_DISABLED: {
    status: 409,
    code: 'webhook_disabled',
    meaning: 'The webhook endpoint is disabled (every delivery failed for three days).',
    action: 'Fix the receiver, then save the endpoint again with `PUT /api/v1/webhook`.',
  },
  OPERATION_REFUSED: {
    status: 409,
    code: 'operation_refused',
    meaning: "Operators' API: the billing rules refuse the change as asked (a token already revoked, an invoice not open, a change Stripe applies only at renewal); nothing was changed and the message says why.",
    action: 'Read the message: do what it says first (or nothing, when the state is already what was wanted).',
  },
  PAYLOAD_TOO_LARGE: {
    status: 413,
    code: 'payload_too_large',
    meaning: 'The request body is larger than the operation takes; the message says the limit.',
    action: 'Send a smaller body (split an upload over several requests).',
  },
  UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    code: 'unsupported_media_type',
    meaning: 'The body is not of the Content-Type the operation reads.',
    action: 'Send the body as `application/json` (`application/x-ndjson` for the operators\' lot upload).',
  },
  VALIDATION_FAILED: {
    status: 422,
    code: 'invalid_request',
    meaning: 'A field, parameter or header is missing or malformed; `errors` maps each field to what is wrong.',
    action: 'Fix the fields `errors` names; retrying unchanged gets the same answer.',
  },
  IDEMPOTENCY_CONFLICT: {
    status: 422,
    code: 'idempotency_conflict',
    meaning: 'The Idempotency-Key was used in the last 24 hours for another request (another VIN or lot); `errors["Idempotency-Key"]` says which.',
    action: 'Use a new key for a new request; resend a key only with the request it was first sent with.',
  },
  RATE_LIMITED: {
    status: 429,
    code: 'rate_limited',
    meaning: "The plan's per-second rate is exceeded.",
    action: 'Wait the `Retry-After` seconds, then retry.',
  },
  QUOTA_EXCEEDED: {
    status: 429,
    code: 'quota_exceeded',
    meaning: "The plan's monthly quota is used up.",
    action: 'Wait for the period reset (`Retry-After`, and the message says when), or move to a larger plan.',
  },
  INTERNAL: {
    status: 500,
    code: 'internal_error',
    meaning: 'A fault of the service; the message carries a request id and no internals.',
    action: 'Retry later with backoff; if it persists, contact support quoting the request id.',
  },
  DATABASE_BUSY: {
    status: 503,
    code: 'service_busy',
    meaning: 'The database is busy (an import holds its write lock, or a lock conflict); nothing was done or counted.',
    action: 'Wait the `Retry-After` seconds, then retry.',
  },
} as const satisfies Record<string, { status: number; code: string | null; meaning: string; action: string }>;

export type ErrorKind = keyof typeof API_ERRORS;

/** The public codes an error body can carry, in the table's order. */
export type PublicErrorCode = NonNullable<(typeof API_ERRORS)[ErrorKind]['code']>;
export const PUBLIC_ERROR_CODES = Object.values(API_ERRORS).flatMap((error) => (error.code === null ? [] : [error.code])) as PublicErrorCode[];

/** The status of each kind, for callers that need only the number (the website's error pages). */
export const ERROR_STATUS = Object.fromEntries(Object.entries(API_ERRORS).map(([kind, error]) => [kind, error.status])) as {
  [K in ErrorKind]: (typeof API_ERRORS)[K]['status'];
};

/** The 401 body is fixed by the contract, byte for byte. */
export const UNAUTHENTICATED_MESSAGE = 'Unauthenticated.';

/** A busy database (a CLI import holding the write lock) is worth retrying after this many seconds. */
export const DATABASE_BUSY_RETRY_AFTER_SECONDS = 1;

export const DATABASE_BUSY_MESSAGE = 'The service is busy; try again in a moment.';

export class ApiError extends Error {
  readonly statusCode: number;

  constructor(
    readonly kind: ErrorKind,
    message: string,
    readonly options: { errors?: Record<string, string[]>; headers?: Record<string, string> } = {},
  ) {
    super(message);
    this.name = 'ApiError';
    this.statusCode = API_ERRORS[kind].status;
  }
}

/** The kinds of the client errors Fastify itself decides, by status. */
const FRAMEWORK_KINDS: Partial<Record<number, ErrorKind>> = {
  400: 'BAD_REQUEST',
  404: 'ROUTE_NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  422: 'VALIDATION_FAILED',
};

/**
 * The kind of a client error decided outside this table (Fastify's, such as a malformed
 * Content-Length): by its status, else a bad request, so that every body keeps to the closed set.
 */
export function kindOfStatus(status: number): ErrorKind {
  return FRAMEWORK_KINDS[status] ?? 'BAD_REQUEST';
}

export function validationError(field: string, messages: string[], kind: 'VALIDATION_FAILED' | 'IDEMPOTENCY_CONFLICT' = 'VALIDATION_FAILED'): ApiError {
  return new ApiError(kind, messages[0] ?? 'The request is invalid.', { errors: { [field]: messages } });
}
