import { sql, type Kysely } from 'kysely';
import type { Database } from '../schema.ts';
import { LOT_FIELDS, type Lot } from '../../domain/lot.ts';
import { newId } from '../../domain/ids.ts';
import type { ChangedField, LotEventBody } from '../../domain/webhook.ts';
import { lotFromRow } from './lot-rows.ts';

/** How long an event is retried: 72 hours from its creation (or its resend). */
export const DELIVERY_WINDOW_MS = 72 * 60 * 60 * 1000;

/** Lots per probe of the watches: 2 parameters a lot stays far below both databases' limits. */
const PROBE_CHUNK = 2000;

const keyOf = (auction: string, lotId: number) => `${auction}\u0000${lotId}`;

/** The lots of a batch that someone watches, and who (accounts with an endpoint and a plan in force). */
export interface BatchWatchers {
  /** Lot key -> accounts watching it (by its VIN or by the lot itself). */
  byLot: Map<string, Set<string>>;
  lots: { auction: string; lotId: number }[];
  /** The stored lots before the batch, by key (absent: the batch creates it). */
  before: Map<string, Lot>;
}

/**
 * The cost of events for an import that matches no watch: one indexed probe of the watches by the
 * batch's VINs and lot ids (watches_vin_idx, watches_lot_idx), inside the batch's transaction.
 * Only when a watch matches are the watched lots read, before and after the upsert. Watches of an
 * account without an enabled endpoint or a plan in force make no event.
 */
export async function findBatchWatchers(kysely: Kysely<Database>, lots: readonly Lot[], at: string): Promise<BatchWatchers | null> {
  const vins = [...new Set(lots.map((lot) => lot.vin))];
  const lotIds = [...new Set(lots.map((lot) => lot.lot_id))];
  const found: { account_id: string; vin: string | null; auction: string | null; lot_id: number | null }[] = [];
  for (let start = 0; start < Math.max(vins.length, lotIds.length); start += PROBE_CHUNK) {
    const vinChunk = vins.slice(start, start + PROBE_CHUNK);
    const lotChunk = lotIds.slice(start, start + PROBE_CHUNK);
    const rows = await kysely
      .selectFrom('watches as w')
      .innerJoin('webhook_endpoints as e', 'e.account_id', 'w.account_id')
      .select(['w.account_id', 'w.vin', 'w.auction', 'w.lot_id'])
      .where((eb) => {
        const parts = [];
        if (vinChunk.length > 0) parts.push(eb('w.vin', 'in', vinChunk));
        if (lotChunk.length > 0) parts.push(eb('w.lot_id', 'in', lotChunk));
        return eb.or(parts);
      })
      .where('e.enabled', '=', 1)
      // eslint-disable-next-line @typescript-eslint/unbound-method -- Kysely's expression builder is a plain object of functions: destructuring it is its documented use.
      .where(({ exists, selectFrom }) =>
        exists(
          selectFrom('subscriptions as s')
            .select(sql.lit(1).as('one'))
            .whereRef('s.account_id', '=', 'w.account_id')
            .where('s.status', '=', 'active')
            .where('s.started_at', '<=', at)
            .where((eb) => eb.or([eb('s.ends_at', 'is', null), eb('s.ends_at', '>', at)])),
        ),
      )
      .execute();
    found.push(...rows);
  }
  if (found.length === 0) return null;

  const byVin = new Map<string, Set<string>>();
  const byLotWatch = new Map<string, Set<string>>();
  for (const row of found) {
    const [map, key] = row.vin !== null ? [byVin, row.vin] : [byLotWatch, keyOf(row.auction!, Number(row.lot_id))];
    let accounts = map.get(key);
    if (!accounts) map.set(key, (accounts = new Set()));
    accounts.add(row.account_id);
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
  return { byLot, lots: watched, before: await readLots(kysely, watched) };
}

/**
 * After the upsert: compares each watched lot with what was stored before the batch, and writes
 * one event per lot and watching account to the outbox, in the batch's transaction. A lot the
 * batch left as it was makes none.
 */
export async function recordLotEvents(kysely: Kysely<Database>, watchers: BatchWatchers, at: string): Promise<number> {
  const after = await readLots(kysely, watchers.lots);
  const giveUpAt = new Date(Date.parse(at) + DELIVERY_WINDOW_MS).toISOString();
  const rows: Database['webhook_outbox'][] = [];
  for (const { auction, lotId } of watchers.lots) {
    const key = keyOf(auction, lotId);
    const lot = after.get(key);
    if (!lot) continue;
    const before = watchers.before.get(key);
    const changed = before ? changedFields(before, lot) : [];
    if (before && changed.length === 0) continue;
    for (const accountId of watchers.byLot.get(key) ?? []) {
      const id = newId('evt');
      const body: LotEventBody = { id, type: before ? 'lot.updated' : 'lot.created', created_at: at, data: { vin: lot.vin, lot, changed } };
      rows.push({
        id,
        account_id: accountId,
        type: body.type,
        payload: JSON.stringify(body),
        created_at: at,
        status: 'pending',
        attempts: 0,
        next_attempt_at: at,
        give_up_at: giveUpAt,
        lease_owner: null,
        lease_until: null,
        last_attempt_at: null,
        finished_at: null,
      });
    }
  }
  for (let start = 0; start < rows.length; start += 200) await kysely.insertInto('webhook_outbox').values(rows.slice(start, start + 200)).execute();
  return rows.length;
}

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

async function readLots(kysely: Kysely<Database>, keys: readonly { auction: string; lotId: number }[]): Promise<Map<string, Lot>> {
  const lots = new Map<string, Lot>();
  for (let start = 0; start < keys.length; start += 500) {
    const chunk = keys.slice(start, start + 500);
    const rows = await kysely
      .selectFrom('lots')
      .selectAll()
      .where((eb) => eb.or(chunk.map((key) => eb.and([eb('auction', '=', key.auction), eb('lot_id', '=', key.lotId)]))))
      .execute();
    for (const row of rows) {
      const lot = lotFromRow(row);
      lots.set(keyOf(lot.auction, lot.lot_id), lot);
    }
  }
  return lots;
}
