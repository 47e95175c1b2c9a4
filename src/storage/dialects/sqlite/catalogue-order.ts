import { sql, type RawBuilder } from 'kysely';

/**
 * SQLite: the catalogue compares `year + 0`, which no index can take as a range. SQLite plans
 * without statistics (the service runs no ANALYZE) and, offered lots_market_idx's range of a
 * model's years, takes it and sorts every match (12,000 rows for a common model at 1M lots)
 * rather than reading lots_make_sale_*_idx in order and checking the year in its entries (0023).
 */
export const catalogueYearSqlite: RawBuilder<number> = sql<number>`${sql.ref('year')} + 0`;
