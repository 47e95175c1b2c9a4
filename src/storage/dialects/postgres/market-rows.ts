import { sql, type RawBuilder } from 'kysely';
import { COMPARABLE_COLUMNS } from '../../lot-rows.ts';

/**
 * PostgreSQL: what a market value's figures read of its comparables as one JSON text, an array of
 * one array per column of COMPARABLE_COLUMNS, each in the same row order (the aggregates of one
 * statement see the rows in one order), '[]' for none where json_agg gives null
 * (sqlite/market-rows.ts says why a list per column).
 */
export const comparablesJsonPostgres: RawBuilder<string> = sql<string>`json_build_array(${sql.join(COMPARABLE_COLUMNS.map((column) => sql`coalesce(json_agg(${sql.ref(column)}), '[]'::json)`))})::text`;
