import { LOT_FIELDS, type Lot } from '../domain/lot.ts';
import { newId } from '../domain/ids.ts';
import type { ChangedField, LotEventBody } from '../domain/webhook.ts';
import type { LotsWrittenHook } from '../storage/repositories/lots-written.ts';
import type { NewWebhookEvent } from '../storage/repositories/webhook-outbox-repository.ts';
import { giveUpAtFor } from './retry-schedule.ts';

const keyOf = (auction: string, lotId: number) => `${auction}\u0000${lotId}`;

/**
 * The webhooks' part in storing lots (docs/webhooks.md): a watched lot that a batch creates or
 * changes makes one `lot.created` or `lot.updated` event per watching account, written to the
 * outbox in the batch's transaction, so that an event is stored before its lot commits and never
 * without it.
 *
 * Who receives one: every account watching the lot's VIN or the lot itself that has an enabled
 * endpoint and a subscription in force (WatchesRepository.watchersOf). The cost for a batch that
 * matches no watch is one indexed probe of the watches; only when one matches are the watched
 * lots read, before and after the upsert. A lot the batch left as it was makes none.
 */
export const lotEvents: LotsWrittenHook = {
  async beforeWrite(tx, lots) {
    const vins = [...new Set(lots.map((lot) => lot.vin))];
    const lotIds = [...new Set(lots.map((lot) => lot.lot_id))];
    const found = await tx.watches.watchersOf(vins, lotIds, tx.at);
    if (found.length === 0) return null;

    const byVin = new Map<string, Set<string>>();
    const byLotWatch = new Map<string, Set<string>>();
    for (const watch of found) {
      const [map, key] = watch.vin !== null ? [byVin, watch.vin] : [byLotWatch, keyOf(watch.auction!, watch.lotId!)];
      let accounts = map.get(key);
      if (!accounts) map.set(key, (accounts = new Set()));
      accounts.add(watch.accountId);
    }
    const byLot = new Map<string, Set<string>>();
    const watched: { auction: string; lotId: number }[] = [];
    for (const lot of lots) {
      const key = keyOf(lot.auction, lot.lot_id);
      const accounts = new Set([...(byVin.get(lot.vin) ?? []), ...(byLotWatch.get(key) ?? [])]);
      if (accounts.size === 0) continue;
      const seen = byLot.get(key);
      if (seen) for (const account of accounts) seen.add(account);
      else {
        byLot.set(key, accounts);
        watched.push({ auction: lot.auction, lotId: lot.lot_id });
      }
    }
    if (watched.length === 0) return null;
    const before = byKey(await tx.findLots(watched));

    return async () => {
      const after = byKey(await tx.findLots(watched));
      const at = tx.at;
      const giveUpAt = giveUpAtFor(new Date(at));
      const events: NewWebhookEvent[] = [];
      for (const { auction, lotId } of watched) {
        const key = keyOf(auction, lotId);
        const lot = after.get(key);
        if (!lot) continue;
        const was = before.get(key);
        const changed = was ? changedFields(was, lot) : [];
        if (was && changed.length === 0) continue;
        const previous = was ? previousValues(was, changed) : {};
        for (const accountId of byLot.get(key) ?? []) {
          const id = newId('evt');
          const body: LotEventBody = { id, type: was ? 'lot.updated' : 'lot.created', created_at: at, data: { vin: lot.vin, lot, changed, previous } };
          events.push({ id, accountId, type: body.type, payload: JSON.stringify(body), at, giveUpAt });
        }
      }
      await tx.webhookOutbox.insertEvents(events);
      return { events: events.length };
    };
  },
};

/** The names of the fields that differ, in the Lot's field order. */
export function changedFields(before: Lot, after: Lot): ChangedField[] {
  const changed: ChangedField[] = [];
  for (const field of LOT_FIELDS) {
    if (field === 'auction' || field === 'lot_id') continue;
    const same = field === 'images' ? JSON.stringify(before.images) === JSON.stringify(after.images) : before[field] === after[field];
    if (!same) changed.push(field);
  }
  return changed;
}

/** Each changed field's value before the change (lot history, issue 29): what a receiver needs to say "from 4,000 to 3,500". */
export function previousValues(before: Lot, changed: readonly ChangedField[]): Partial<Record<ChangedField, unknown>> {
  const previous: Partial<Record<ChangedField, unknown>> = {};
  for (const field of changed) previous[field] = before[field];
  return previous;
}

function byKey(lots: readonly Lot[]): Map<string, Lot> {
  return new Map(lots.map((lot) => [keyOf(lot.auction, lot.lot_id), lot]));
}
