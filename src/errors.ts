/**
 * The closed set of errors the API can answer with, mapped to statuses in this one place.
 * Every error body is `{ message }`, plus `errors` (field -> messages) for validation failures.
 */
export const ERROR_STATUS = {
  UNAUTHENTICATED: 401,
  SUBSCRIPTION_REQUIRED: 402,
  NO_RECORDS: 404,
  ROUTE_NOT_FOUND: 404,
  /** A resource of the account (a watch, the webhook endpoint, an event) that it does not have. */
  NOT_FOUND: 404,
  /** The request conflicts with the account's state: a plan's watch limit, a disabled endpoint. */
  CONFLICT: 409,
  METHOD_NOT_ALLOWED: 405,
  BAD_REQUEST: 400,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  VALIDATION_FAILED: 422,
  RATE_LIMITED: 429,
  QUOTA_EXCEEDED: 429,
  INTERNAL: 500,
  DATABASE_BUSY: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** The 401 body is fixed by the contract, byte for byte. */
export const UNAUTHENTICATED_MESSAGE = 'Unauthenticated.';

/** A busy database (a CLI import holding the write lock) is worth retrying after this many seconds. */
export const DATABASE_BUSY_RETRY_AFTER_SECONDS = 1;

export const DATABASE_BUSY_MESSAGE = 'The service is busy; try again in a moment.';

export class ApiError extends Error {
  readonly statusCode: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly options: { errors?: Record<string, string[]>; headers?: Record<string, string> } = {},
  ) {
    super(message);
    this.name = 'ApiError';
    this.statusCode = ERROR_STATUS[code];
  }
}

export function validationError(field: string, messages: string[]): ApiError {
  return new ApiError('VALIDATION_FAILED', messages[0] ?? 'The request is invalid.', { errors: { [field]: messages } });
}
