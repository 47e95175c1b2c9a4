import { sql, type RawBuilder } from 'kysely';
import { COMPARABLE_COLUMNS } from '../../lot-rows.ts';

/**
 * PostgreSQL: the comparables of a market value as one JSON text, an array of arrays in
 * COMPARABLE_COLUMNS order ('[]' for none, where json_agg gives null), written by the server
 * rather than one row object each by the driver (sqlite/market-rows.ts says why).
 */
export const comparablesJsonPostgres: RawBuilder<string> = sql<string>`coalesce(json_agg(json_build_array(${sql.join(COMPARABLE_COLUMNS.map((column) => sql.ref(column)))})), '[]'::json)::text`;
