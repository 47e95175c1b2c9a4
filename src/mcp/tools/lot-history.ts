import { Type } from '@sinclair/typebox';
import { LotHistorySchema } from '../../domain/lot-history.ts';
import type { SearchPrincipal } from '../../domain/principal.ts';
import { MAX_LOT_ID } from '../../watches/watch-service.ts';
import { countedBody, countedCost } from '../counted-answer.ts';
import { IdempotencyKeyArgument } from '../schemas.ts';
import { count, defineTool } from '../tool.ts';

/** A change's value in a sentence: short, whatever its type. */
function shown(value: unknown): string {
  if (value === null || value === undefined) return 'none';
  if (Array.isArray(value)) return `${value.length} photo${value.length === 1 ? '' : 's'}`;
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length > 40 ? `${text.slice(0, 39)}…` : text;
}

/** GET /api/v1/lots/{auction}/{lot_id}/history as a tool: counted as that call. */
export const lotHistory = defineTool({
  name: 'lot_history',
  title: "An auction lot's history",
  description:
    'Every state the service has seen of one auction lot, oldest first: when it was first and last seen, and for each import that changed it, when, from which source, and each field from and to ' +
    '(price, sale date, odometer, damage, title, photos, and listing when the lot left the auction\'s listing or came back). ' +
    'Use it to see how a lot\'s price or sale date moved, or whether photos were removed. Counted as one call against the monthly quota, a lot that is not known too.',
  access: 'search',
  input: Type.Object(
    {
      auction: Type.String({ maxLength: 40, description: 'The auction, a lower-case word: copart, iaai, ...' }),
      lot_id: Type.Integer({ minimum: 1, maximum: MAX_LOT_ID, description: 'The lot number at that auction.' }),
      idempotency_key: IdempotencyKeyArgument,
    },
    { additionalProperties: false },
  ),
  output: Type.Object(LotHistorySchema.properties, { title: 'LotHistory', additionalProperties: false }),
  // Not read-only: each call spends quota.
  annotations: { title: "An auction lot's history", readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  async call({ services, principal }, args) {
    const outcome = await services.history.historyOfLot(principal as SearchPrincipal, { auction: args.auction, lotId: String(args.lot_id) }, args.idempotency_key);
    const { body, replayed } = countedBody(outcome);
    const latest = body.versions.length > 1 ? body.versions[body.versions.length - 1] : undefined;
    const changes = latest ? Object.entries(latest.changed).map(([field, change]) => `${field} ${shown(change.from)} → ${shown(change.to)}`) : [];
    return {
      json: body,
      summary: [
        `${body.auction} lot ${body.lot_id} (VIN ${body.vin}): first seen ${body.first_seen_at}, last seen ${body.last_seen_at}, ${count(body.versions.length, 'version')}.`,
        latest ? `Latest change ${latest.observed_at} from ${latest.source}: ${changes.slice(0, 6).join(', ')}${changes.length > 6 ? `, and ${changes.length - 6} more` : ''}.` : 'No change since it was first seen.',
        countedCost(principal.sandbox, replayed),
        'Every version, field by field, is in the structured content.',
      ].join(' '),
    };
  },
});
