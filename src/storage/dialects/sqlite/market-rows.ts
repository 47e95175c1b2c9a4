import { sql, type RawBuilder } from 'kysely';
import { COMPARABLE_COLUMNS } from '../../lot-rows.ts';

/**
 * SQLite: what a market value's figures read of its comparables as one JSON text, an array of one
 * array per column of COMPARABLE_COLUMNS, each in the same row order (every aggregate of one
 * statement sees the rows in one order). A row object per comparable, built by the driver column
 * by column, was most of a market value's CPU; then an array per comparable, each a JSON array
 * written by SQLite and read back by JSON.parse: a list per column holds the same values with
 * less to write and to read (docs/decisions.md, "The market by VIN").
 */
export const comparablesJsonSqlite: RawBuilder<string> = sql<string>`json_array(${sql.join(COMPARABLE_COLUMNS.map((column) => sql`json_group_array(${sql.ref(column)})`))})`;
