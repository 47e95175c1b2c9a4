import { sql, type RawBuilder } from 'kysely';

/**
 * PostgreSQL: the catalogue compares the year column itself. Its planner weighs the ordered read of
 * lots_make_sale_*_idx against a sort with statistics and the LIMIT, and checks a year range on the
 * index's trailing column before fetching the row; `year + 0` (SQLite's form) would fetch every
 * model's row to check it, and estimate the year's selectivity blind.
 */
export const catalogueYearPostgres: RawBuilder<number> = sql<number>`${sql.ref('year')}`;
