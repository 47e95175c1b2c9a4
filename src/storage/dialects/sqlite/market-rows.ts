import { sql, type RawBuilder } from 'kysely';
import { COMPARABLE_COLUMNS } from '../../lot-rows.ts';

/**
 * SQLite: what a market value reads of its comparables as one JSON text, an array of one array per
 * column of COMPARABLE_COLUMNS, each in the same row order (every aggregate of one statement sees
 * the rows in one order). A row object per comparable, built by the driver column by column, was
 * most of a market value's CPU; SQLite writes the text in C and JSON.parse reads it in one pass. A
 * list per column costs SQLite what an array per row did, and leaves JavaScript no array per
 * comparable to make: the figures read the columns they need (docs/decisions.md, "The market by VIN").
 */
export const comparablesJsonSqlite: RawBuilder<string> = sql<string>`json_array(${sql.join(COMPARABLE_COLUMNS.map((column) => sql`json_group_array(${sql.ref(column)})`))})`;
