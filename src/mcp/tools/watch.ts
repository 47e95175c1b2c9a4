import { Type } from '@sinclair/typebox';
import { createdWatch, WatchSchema } from '../../http/api/v1/watches.ts';
import { MAX_LOT_ID } from '../../watches/watch-service.ts';
import { defineTool } from '../tool.ts';

/** POST /api/v1/watches as a tool. */
export const watch = defineTool({
  name: 'watch',
  title: 'Watch a VIN or an auction lot',
  description:
    'Start watching a vehicle: give either vin (every lot of the vehicle) or auction and lot_id (that lot), never both. ' +
    "When a watched lot appears or changes (sale date, price, odometer, damage, title, photos), a lot.created or lot.updated event goes to the account's webhook. " +
    'Watching what is already watched answers the existing watch. Free (not counted); the plan limits how many watches an account holds (Standard 100, Professional 500, VIP 2,000). Needs a live token.',
  access: 'account',
  input: Type.Object(
    {
      vin: Type.Optional(Type.String({ maxLength: 64, description: 'A VIN to watch (not with auction and lot_id).' })),
      auction: Type.Optional(Type.String({ maxLength: 40, description: 'The auction of a lot to watch, such as copart or iaai (with lot_id).' })),
      lot_id: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_LOT_ID, description: 'The lot number at that auction (with auction).' })),
    },
    { additionalProperties: false },
  ),
  output: Type.Object(WatchSchema.properties, { title: 'Watch', additionalProperties: false }),
  annotations: { title: 'Watch a VIN or an auction lot', readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async call({ services, principal }, args) {
    const { status, watch: json } = createdWatch(await services.watches.create(principal.accountId, { vin: args.vin, auction: args.auction, lotId: args.lot_id }));
    const what = json.vin !== null ? `VIN ${json.vin}` : `${json.auction} lot ${json.lot_id}`;
    return {
      json,
      summary:
        status === 201
          ? `Now watching ${what} (watch ${json.id}): lot.created and lot.updated events for it go to the account's webhook. Remove it with unwatch.`
          : `${what} was already watched (watch ${json.id}, since ${json.created_at}); nothing changed.`,
    };
  },
});
