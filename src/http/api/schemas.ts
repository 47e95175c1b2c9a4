import { Type } from '@sinclair/typebox';
import { LotSchema } from '../../domain/lot.ts';

export const ReportSchema = Type.Object(
  {
    status: Type.Literal('success', { description: 'Always "success" on a 200.' }),
    vin: Type.String({ description: 'The VIN the report is for, normalised (trimmed, upper-case).' }),
    origin_timestamp: Type.String({
      format: 'date-time',
      description: 'When the report was made: ISO 8601, milliseconds, UTC (Z).',
      examples: ['2026-11-21T07:55:12.123Z'],
    }),
    lots: Type.Array(LotSchema, { description: 'Every known auction lot of the vehicle, newest sale first.' }),
    report_url: Type.String({
      format: 'uri',
      description: 'Shareable report page: {PUBLIC_BASE_URL}/report/<uuid v4>. Anyone holding the link can open it.',
    }),
  },
  { $id: 'Report', title: 'Report', additionalProperties: false },
);

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
