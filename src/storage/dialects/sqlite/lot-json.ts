import { sql, type Kysely } from 'kysely';
import { LOT_FIELDS } from '../../../domain/lot.ts';
import type { Database } from '../../schema.ts';

if (LOT_FIELDS[LOT_FIELDS.length - 1] !== 'images') throw new Error('lot-json.ts splices images in as the last field of a lot');

/** json_object's arguments for every field of a lot but `images` (spliced in by withImages), columns named through `table` if given. */
export const lotJsonPairs = (table?: string) =>
  LOT_FIELDS.filter((field) => field !== 'images')
    .map((field) => `'${field}', ${table ? `${table}.` : ''}"${field}"`)
    .join(', ');

const PAIRS = lotJsonPairs();

/**
 * SQLite: the lots of a VIN, each as its JSON text (LotJson) but for `images`, with the fields
 * that order them. One probe of lots_vin_idx; the row's values never become JavaScript values one
 * by one. `images`, the last field, is stored as JSON text (JSON.stringify of the list) and is
 * spliced in by withImages(): passing it through json() made SQLite parse and print it again, a
 * quarter of the read's time (docs/benchmarks.md, issue 10).
 */
export function lotsJsonByVinSqlite(k: Kysely<Database>, vin: string) {
  return k
    .selectFrom('lots')
    .select([sql<string>`json_object(${sql.raw(PAIRS)})`.as('lot'), 'images', 'vin', 'sale_date', 'auction', 'lot_id'])
    .where('vin', '=', vin);
}

/** A row of lotsJsonByVinSqlite with its lot's JSON text complete: `images` as its last field. */
export function withImages<Row extends { lot: string; images: string }>(row: Row): Row {
  row.lot = `${row.lot.slice(0, -1)},"images":${row.images}}`;
  return row;
}
