import { sql, type Kysely } from 'kysely';
import type { Lot } from '../../domain/lot.ts';
import { comparableGroup, MARKET_FIELDS, marketGroupKey, type MarketFields, type MarketGroup } from '../../domain/market-group.ts';
import type { StoredLotJson } from '../dialects/dialect.ts';
import type { Database } from '../schema.ts';
import { lotKey, type BatchPlan } from './lot-versions.ts';

/**
 * The market groups' generations (0026), kept by the import: what lets a server cache each group's
 * comparables and rebuild only the groups whose generation moved (market/comparables-cache.ts).
 */

/** The row of the global epoch (0026): bumped by each batch of a first bulk load instead of its groups. */
export const EPOCH_GROUP: MarketGroup = { makeKey: '', modelKey: '', year: 0, month: '' };

const MARKET_FIELD_SET = new Set<string>(MARKET_FIELDS);
/** Groups per statement: 5 parameters each, far below either database's limit. */
const GROUPS_PER_STATEMENT = 1000;

type Incoming = Lot & { readonly derived?: Partial<Lot> | undefined };

/**
 * The groups a batch's written lots leave or enter, from what the batch already knows: what
 * planBatch worked out (a changed lot's update carries it as stored and as merged), the lots
 * stored before it (`before`, parsed only for a lot whose derived values fill a market field and
 * that its lines left unchanged); a lot new to the catalogue by its lines merged in order, as the upsert
 * merges them; the derived values where they fill a market field still unknown (fillDerived).
 * A change to no market field (a photo, a status) bumps nothing.
 */
export function marketGroupsWritten(lots: readonly Incoming[], before: readonly StoredLotJson[], plan: BatchPlan): MarketGroup[] {
  const groups = new Map<string, MarketGroup>();
  const add = (lot: MarketFields) => {
    const group = comparableGroup(lot);
    if (group !== null) groups.set(marketGroupKey(group), group);
  };
  // Each lot's values after the batch's lines: its update's merge, or its new lines folded in order.
  const after = new Map<string, MarketFields>();
  for (const update of plan.updates) {
    const key = lotKey(update.auction, update.lot_id);
    after.set(key, update.merged);
    if (!update.fields.some((field) => MARKET_FIELD_SET.has(field))) continue;
    add(update.stored);
    add(update.merged);
  }
  const fresh = new Map<string, Record<string, unknown>>();
  for (let i = 0; i < lots.length; i++) {
    if (plan.known[i] || !plan.write[i]) continue;
    const line = lots[i]!;
    const key = lotKey(line.auction, line.lot_id);
    let values = fresh.get(key);
    if (values === undefined) fresh.set(key, (values = {}));
    for (const field of MARKET_FIELDS) values[field] = line[field] ?? values[field] ?? null;
  }
  for (const [key, values] of fresh) {
    after.set(key, values as MarketFields);
    add(values as MarketFields);
  }
  let stored: Map<string, StoredLotJson> | undefined;
  for (const line of lots) {
    const { derived } = line;
    if (!derived || !MARKET_FIELDS.some((field) => derived[field] !== null && derived[field] !== undefined)) continue;
    const key = lotKey(line.auction, line.lot_id);
    let base = after.get(key);
    if (base === undefined) {
      stored ??= new Map(before.map((row) => [lotKey(row.auction, row.lot_id), row]));
      const row = stored.get(key);
      if (row === undefined) continue;
      base = JSON.parse(row.lot) as Lot;
    }
    const filled = { ...base } as Record<string, unknown>;
    // The make and model keys follow the upsert's values only (fillDerived leaves them): a derived make or model moves no group.
    for (const field of ['year', 'sale_date', 'price', 'retail_value', 'odometer', 'primary_damage'] as const) filled[field] ??= derived[field] ?? null;
    add(base);
    add(filled as MarketFields);
  }
  return [...groups.values()];
}

/**
 * Bumps the generation of each group, in the caller's transaction: one statement per 1,000 groups,
 * in key order (two batches bumping common groups on PostgreSQL lock their rows in one order).
 */
export async function bumpMarketGroups(kysely: Kysely<Database>, groups: readonly MarketGroup[]): Promise<void> {
  if (groups.length === 0) return;
  const sorted = [...groups].sort((a, b) => compare(a.makeKey, b.makeKey) || compare(a.modelKey, b.modelKey) || a.year - b.year || compare(a.month, b.month));
  for (let start = 0; start < sorted.length; start += GROUPS_PER_STATEMENT) {
    await kysely
      .insertInto('market_groups')
      .values(sorted.slice(start, start + GROUPS_PER_STATEMENT).map((group) => ({ make_key: group.makeKey, model_key: group.modelKey, year: group.year, month: group.month, generation: 1 })))
      .onConflict((oc) => oc.columns(['make_key', 'model_key', 'year', 'month']).doUpdateSet({ generation: sql`market_groups.generation + 1` }))
      .execute();
  }
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
