import { sql, type Kysely, type RawBuilder } from 'kysely';
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
 * Each lot's count of versions, which a report's snapshot names (0025, src/history/report-snapshot.ts):
 * a probe of lot_versions_lot_idx that finds no row for a lot never changed.
 */
const VERSIONS = sql<number>`(select count(*) from lot_versions as v where v.auction = lots.auction and v.lot_id = lots.lot_id)`.as('versions');

/**
 * SQLite: the lots of a VIN, each as its JSON text (LotJson) but for `images`, with the fields
 * that order them. One probe of lots_vin_idx; the row's values never become JavaScript values one
 * by one. `images`, the last field, is stored as JSON text (JSON.stringify of the list) and is
 * spliced in by withImages(): passing it through json() made SQLite parse and print it again, a
 * quarter of the read's time (docs/benchmarks.md, "Measured choices on the search path").
 */
export function lotsJsonByVinSqlite(k: Kysely<Database>, vin: string) {
  return k
    .selectFrom('lots')
    .select([sql<string>`json_object(${sql.raw(PAIRS)})`.as('lot'), 'images', VERSIONS, 'vin', 'sale_date', 'auction', 'lot_id'])
    .where('vin', '=', vin);
}

/**
 * SQLite: a lots row's whole JSON text (LotJson), `images` included, as one select expression over
 * `lots` (the catalogue's pages: dialect.ts, lotJson). `images` is spliced in as the search's
 * withImages does, here in SQL: json_object's text ends in the value of the field before `images`
 * (a string or null, never a `}`), so rtrim takes off exactly its closing brace.
 */
export const lotJsonOfRowSqlite: RawBuilder<string> = sql<string>`rtrim(json_object(${sql.raw(lotJsonPairs('lots'))}), '}') || ',"images":' || lots."images" || '}'`;

/** A row of lotsJsonByVinSqlite with its lot's JSON text complete: `images` as its last field. */
export function withImages<Row extends { lot: string; images: string }>(row: Row): Row {
  row.lot = `${row.lot.slice(0, -1)},"images":${row.images}}`;
  return row;
}
