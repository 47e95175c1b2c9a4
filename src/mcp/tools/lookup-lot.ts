import { Type } from '@sinclair/typebox';
import type { SearchPrincipal } from '../../domain/principal.ts';
import { MAX_LOT_ID } from '../../watches/watch-service.ts';
import { reportAnswer } from '../report-answer.ts';
import { IdempotencyKeyArgument, ReportOutput } from '../schemas.ts';
import { defineTool } from '../tool.ts';

/** GET /api/v1/lots/{auction}/{lot_id} as a tool: a search for the lot's vehicle, counted the same. */
export const lookupLot = defineTool({
  name: 'lookup_lot',
  title: 'Look up an auction lot',
  description:
    "Look up the vehicle of one auction lot (an auction such as copart or iaai, and its lot number as shown on the auction's site). " +
    'Answers the same report as search_vin for that lot\'s VIN: every known lot of the vehicle, not only this one, and a shareable report page URL. ' +
    'Counted as one search against the monthly quota, a lot that is not known too; an unknown auction word is refused without counting (the error lists the known ones).',
  access: 'search',
  input: Type.Object(
    {
      auction: Type.String({ maxLength: 40, description: 'The auction, a lower-case word: copart, iaai, ...' }),
      lot_id: Type.Integer({ minimum: 1, maximum: MAX_LOT_ID, description: 'The lot number at that auction, e.g. 90000011.' }),
      idempotency_key: IdempotencyKeyArgument,
    },
    { additionalProperties: false },
  ),
  output: ReportOutput,
  // Not read-only: each call spends quota and stores a report; a client should not call it unasked.
  annotations: { title: 'Look up an auction lot', readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  async call({ services, principal }, args) {
    const outcome = await services.search.searchByLot(principal as SearchPrincipal, args.auction, String(args.lot_id), args.idempotency_key);
    return reportAnswer(outcome, principal.sandbox);
  },
});
