import { Type } from '@sinclair/typebox';
import { LotSchema } from '../domain/lot.ts';
import { ReportSchema } from '../domain/report.ts';

/**
 * The Lot, and the Report as a tool's outputSchema: the API's ReportSchema with its Lot inlined, because an
 * outputSchema stands alone (a client cannot resolve the API document's `$ref: Lot`).
 */
export const LotOutput = Type.Object(LotSchema.properties, { additionalProperties: false, title: 'Lot' });

export const ReportOutput = Type.Object(
  {
    ...ReportSchema.properties,
    lots: Type.Array(LotOutput, { description: ReportSchema.properties.lots.description }),
  },
  { title: 'Report', additionalProperties: false },
);

/** The optional idempotency key of the counted tools: the API's Idempotency-Key header as an argument. */
export const IdempotencyKeyArgument = Type.Optional(
  Type.String({
    maxLength: 255,
    description:
      'Optional, 1 to 255 visible ASCII characters: the API\'s Idempotency-Key. Repeating a key with the same request within 24 hours returns the same report and is not counted again; use one when you may retry.',
  }),
);
