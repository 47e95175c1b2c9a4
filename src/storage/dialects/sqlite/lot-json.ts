import { sql, type Kysely } from 'kysely';
import { LOT_FIELDS } from '../../../domain/lot.ts';
import type { Database } from '../../schema.ts';

const PAIRS = LOT_FIELDS.map((field) => (field === 'images' ? `'images', json("images")` : `'${field}', "${field}"`)).join(', ');

/**
 * SQLite: the lots of a VIN, each as its JSON text (LotJson) built by json_object in the lot's
 * field order, with the fields that order them. One probe of lots_vin_idx; the row's 31 values
 * never become JavaScript values one by one, and `images` (stored as JSON text) is embedded as is.
 */
export function lotsJsonByVinSqlite(k: Kysely<Database>, vin: string) {
  return k
    .selectFrom('lots')
    .select([sql<string>`json_object(${sql.raw(PAIRS)})`.as('lot'), 'vin', 'sale_date', 'auction', 'lot_id'])
    .where('vin', '=', vin);
}
