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

const ref = (description: string) => Type.Ref(ErrorSchema, { description });

/** The error statuses every authenticated API route can answer with. */
export const authErrorResponses = {
  401: ref('Authorization missing, malformed, unknown or revoked. Body is exactly {"message":"Unauthenticated."}.'),
  402: ref('The token is valid but its account has no active subscription.'),
  '5xx': ref('A fault of the service. The message carries a request id and no internals.'),
};

export const searchErrorResponses = {
  ...authErrorResponses,
  404: ref('The VIN is valid but no auction record is known for it. Counts against the quota.'),
  413: ref('Request body too large (POST only; the limit is 4 KiB).'),
  422: ref('vin missing or malformed (errors.vin says what is wrong), or a bad Idempotency-Key.'),
  429: ref('Per-second rate exceeded or monthly quota used up; the message says which. See Retry-After.'),
};
