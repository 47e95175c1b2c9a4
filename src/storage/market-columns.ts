/**
 * The columns of lots a market value reads of each comparable, in the order of the arrays each
 * dialect's comparablesJson writes (dialects/{sqlite,postgres}/market-rows.ts): all held by
 * lots_market_idx (0023), so the read touches no table row.
 */
export const COMPARABLE_COLUMNS = ['auction', 'lot_id', 'year', 'price', 'retail_value', 'odometer', 'primary_damage', 'damage_key', 'sale_date'] as const;

/** A comparable as the dialects' JSON array gives it. */
export type ComparableTuple = [auction: string, lotId: number, year: number | null, price: number, retailValue: number | null, odometer: number | null, primaryDamage: string | null, damageKey: string | null, saleDate: string];
