import { sql, type RawBuilder } from 'kysely';
import { COMPARABLE_COLUMNS } from '../../lot-rows.ts';

/**
 * SQLite: the comparables of a market value as one JSON text, an array of arrays in
 * COMPARABLE_COLUMNS order. A row object per comparable, built by the driver column by column,
 * was most of a market value's CPU (1,300 comparables a call at 1M lots); SQLite writes the text
 * in C and JSON.parse reads it in one pass (docs/decisions.md, "The market by VIN").
 */
export const comparablesJsonSqlite: RawBuilder<string> = sql<string>`json_group_array(json_array(${sql.join(COMPARABLE_COLUMNS.map((column) => sql.ref(column)))}))`;
