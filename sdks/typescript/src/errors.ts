import type { ErrorCode } from './generated/types.ts';

/** What an error answer carried, as the service sent it. */
export interface ErrorDetails {
  status: number;
  code: ErrorCode | null;
  message: string;
  /** For a 422: each refused field (or header) with what is wrong. */
  errors: Record<string, string[]> | null;
  /** `X-Request-Id`: quote it to support. */
  requestId: string | null;
  /** `Retry-After` in seconds, on a 429 or 503. */
  retryAfter: number | null;
  headers: Headers;
  /** The body as parsed JSON, or its text when it was not JSON. */
  body: unknown;
}

/**
 * An error answer of the API (any status outside 2xx). Catch this class for all of them, or one
 * of the subclasses below for a status; `code` tells apart the errors that share a status
 * (`rate_limited` and `quota_exceeded` are both 429).
 */
export class VinhistoryApiError extends Error {
  readonly status: number;
  readonly code: ErrorCode | null;
  readonly errors: Record<string, string[]> | null;
  readonly requestId: string | null;
  readonly retryAfter: number | null;
  readonly headers: Headers;
  readonly body: unknown;

  constructor(details: ErrorDetails) {
    super(details.message);
    this.name = new.target.name;
    this.status = details.status;
    this.code = details.code;
    this.errors = details.errors;
    this.requestId = details.requestId;
    this.retryAfter = details.retryAfter;
    this.headers = details.headers;
    this.body = details.body;
  }
}

/** 400: the request could not be read (a body that is not JSON). */
export class BadRequestError extends VinhistoryApiError {}
/** 401: the token is missing, unknown or revoked. */
export class AuthenticationError extends VinhistoryApiError {}
/** 402: the account has no subscription in force. */
export class SubscriptionRequiredError extends VinhistoryApiError {}
/** 403: a sandbox token on an operation that takes only live tokens. */
export class PermissionDeniedError extends VinhistoryApiError {}
/** 404: no records for the VIN or lot (`no_records`, counted), or no such resource (`not_found`). */
export class NotFoundError extends VinhistoryApiError {}
/** 409: the plan's watch limit, a disabled webhook endpoint. */
export class ConflictError extends VinhistoryApiError {}
/** 413: the body is larger than the operation takes. */
export class PayloadTooLargeError extends VinhistoryApiError {}
/** 422: a field, parameter or header is refused (`errors` says which), or an Idempotency-Key conflict. */
export class UnprocessableEntityError extends VinhistoryApiError {}
/** 429: the per-second rate (`rate_limited`) or the monthly quota (`quota_exceeded`); `retryAfter` says when. */
export class RateLimitError extends VinhistoryApiError {}
/** 503: the service is busy; nothing was done or counted. */
export class ServiceUnavailableError extends VinhistoryApiError {}
/** Any other 5xx: a fault of the service. */
export class InternalServerError extends VinhistoryApiError {}

const BY_STATUS: Record<number, typeof VinhistoryApiError> = {
  400: BadRequestError,
  401: AuthenticationError,
  402: SubscriptionRequiredError,
  403: PermissionDeniedError,
  404: NotFoundError,
  409: ConflictError,
  413: PayloadTooLargeError,
  422: UnprocessableEntityError,
  429: RateLimitError,
  503: ServiceUnavailableError,
};

/** The error of an answer's status: its own class, else the base (a 5xx: InternalServerError). */
export function apiErrorFor(details: ErrorDetails): VinhistoryApiError {
  const Class = BY_STATUS[details.status] ?? (details.status >= 500 ? InternalServerError : VinhistoryApiError);
  return new Class(details);
}

/** No answer came: the connection failed or was refused, or the timeout passed. */
export class VinhistoryConnectionError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'VinhistoryConnectionError';
  }
}

/** The request took longer than its timeout; nothing is known of what the service did. */
export class VinhistoryTimeoutError extends VinhistoryConnectionError {
  constructor(timeoutMs: number, options?: { cause?: unknown }) {
    super(`no answer within ${timeoutMs} ms`, options);
    this.name = 'VinhistoryTimeoutError';
  }
}
