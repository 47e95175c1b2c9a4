import { sql, type Kysely, type RawBuilder } from 'kysely';
import { LOT_FIELDS } from '../../../domain/lot.ts';
import type { Database } from '../../schema.ts';

/** The select list of a lot's JSON (row_to_json of a subselect over `table`), in LOT_FIELDS order. */
const lotJsonColumns = (table: string) => LOT_FIELDS.map((field) => (field === 'images' ? `${table}."images"::json as "images"` : `${table}."${field}"`)).join(', ');

/** lotJsonColumns over `l`, the alias of the reads by VIN and of lot history. */
export const COLUMNS = lotJsonColumns('l');

/** PostgreSQL: a lots row's whole JSON text (LotJson) as one select expression over `lots` (the catalogue's pages: dialect.ts, lotJson). */
export const lotJsonOfRowPostgres: RawBuilder<string> = sql<string>`(select row_to_json(j)::text from (select ${sql.raw(lotJsonColumns('lots'))}) as j)`;

/**
 * PostgreSQL: the lots of the VINs asked for (the searches of one turn of the event loop share one
 * statement: batched-reads.ts), each as its JSON text (LotJson) in the lot's field order, with the
 * fields that order them. row_to_json writes compact JSON in the subselect's column order
 * (json_build_object would add a space around every colon); `images`, stored as JSON text, is
 * embedded as JSON.
 */
export function lotsJsonByVinsPostgres(k: Kysely<Database>, vins: string[]) {
  return k
    .selectFrom('lots as l')
    .select([
      sql<string>`(select row_to_json(j)::text from (select ${sql.raw(COLUMNS)}) as j)`.as('lot'),
      // Each lot's count of versions, which a report's snapshot names (0025): read in this statement, of its moment.
      sql<number>`(select count(*)::int from lot_versions as v where v.auction = l.auction and v.lot_id = l.lot_id)`.as('versions'),
      'l.vin',
      'l.sale_date',
      'l.auction',
      'l.lot_id',
    ])
    .where('l.vin', '=', sql<string>`any(${vins})`);
}
