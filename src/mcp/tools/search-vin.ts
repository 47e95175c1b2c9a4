import { Type } from '@sinclair/typebox';
import type { SearchPrincipal } from '../../domain/principal.ts';
import { reportAnswer } from '../report-answer.ts';
import { IdempotencyKeyArgument, ReportOutput } from '../schemas.ts';
import { defineTool } from '../tool.ts';

/** POST /api/v1/search as a tool: the same search, counted the same. */
export const searchVin = defineTool({
  name: 'search_vin',
  title: 'Search a VIN',
  description:
    "Look up a vehicle's auction history by its VIN (17 characters; I, O and Q never occur; North American VINs carry a check digit). " +
    'Answers every known auction lot (Copart, IAAI, ...) newest sale first: sale date and price, damage, odometer, title document, repair cost, retail value, location, photo URLs, ' +
    'plus a shareable report page URL. Counted as one search against the monthly quota, a VIN with no records (an error "No auction records were found") too; ' +
    'a malformed VIN is refused without counting. Call get_usage to see the quota left. With a sandbox token (vh_test_) it searches only the documented test VINs, uncounted.',
  access: 'search',
  input: Type.Object(
    {
      vin: Type.String({ maxLength: 64, description: 'The VIN, e.g. 4JGBF7BE5AA585531 (case and surrounding spaces ignored).' }),
      idempotency_key: IdempotencyKeyArgument,
    },
    { additionalProperties: false },
  ),
  output: ReportOutput,
  // Not read-only: each call spends quota and stores a report; a client should not call it unasked.
  annotations: { title: 'Search a VIN', readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  async call({ services, principal }, args) {
    const outcome = await services.search.search(principal as SearchPrincipal, args.vin, args.idempotency_key);
    return reportAnswer(outcome, principal.sandbox);
  },
});
