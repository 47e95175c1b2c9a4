import type { LotRow, NewLotRow } from '../db/schema.ts';
import { LOT_FIELDS, type Lot } from '../domain/lot.ts';

export function lotFromRow(row: LotRow): Lot {
  const lot = {} as Record<string, unknown>;
  for (const field of LOT_FIELDS) lot[field] = field === 'images' ? JSON.parse(row.images) : row[field];
  return lot as Lot;
}

export function rowFromLot(lot: Lot, now: string): NewLotRow {
  const row = { created_at: now, updated_at: now } as Record<string, unknown>;
  for (const field of LOT_FIELDS) row[field] = field === 'images' ? JSON.stringify(lot.images) : lot[field];
  return row as unknown as NewLotRow;
}

/**
 * The merge rule of an upsert: a field the incoming lot leaves unknown (null, or no images) keeps
 * the value already stored, because a thinner feed must not erase what a richer one told us;
 * a field it gives replaces the stored one. Returns the merged lot, or null when nothing changes.
 */
export function mergeLot(stored: Lot, incoming: Lot): Lot | null {
  const merged = { ...stored } as Record<string, unknown>;
  let changed = false;
  for (const field of LOT_FIELDS) {
    const value = incoming[field];
    if (field === 'images') {
      const images = value as string[];
      if (images.length > 0 && JSON.stringify(images) !== JSON.stringify(stored.images)) {
        merged.images = images;
        changed = true;
      }
      continue;
    }
    if (value !== null && value !== stored[field]) {
      merged[field] = value;
      changed = true;
    }
  }
  return changed ? (merged as Lot) : null;
}
