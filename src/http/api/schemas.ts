import { Type } from '@sinclair/typebox';

export const ErrorSchema = Type.Object(
  {
    message: Type.String({ description: 'What went wrong, for a human.' }),
    errors: Type.Optional(
      Type.Record(Type.String(), Type.Array(Type.String()), {
        description: 'Validation failures (422 only): field name to messages.',
      }),
    ),
  },
  { $id: 'Error', title: 'Error' },
);

export const errorRef = (description: string, headers?: Record<string, HeaderDoc>) =>
  Type.Ref(ErrorSchema, headers ? { description, headers } : { description });

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
  401: errorRef('Authorization missing, malformed, unknown or revoked. Body is exactly {"message":"Unauthenticated."}.', wwwAuthenticateHeader('vinhistory')),
  402: errorRef('The token is valid but its account has no active subscription.'),
  503: errorRef(
    'The database is busy (an import holds its write lock, or a lock or serialization conflict); nothing was counted. Try again after Retry-After.',
    retryAfterHeader,
  ),
  '5xx': errorRef('A fault of the service. The message carries a request id and no internals.'),
};

export const searchErrorResponses = {
  ...authErrorResponses,
  404: errorRef('The VIN is valid but no auction record is known for it. Counts against the quota.'),
  413: errorRef('Request body too large (POST only; the limit is 4 KiB).'),
  422: errorRef('vin missing or malformed (errors.vin says what is wrong), or a bad Idempotency-Key.'),
  429: errorRef('Per-second rate exceeded or monthly quota used up; the message says which. See Retry-After.'),
};

/** What a route that reads a JSON body answers when the body cannot be read as JSON. */
export const jsonBodyErrorResponses = {
  400: errorRef('The body is not valid JSON.'),
  415: errorRef('The Content-Type is not application/json.'),
};
