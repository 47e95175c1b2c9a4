import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * The market's groups and their generations (issue 24; docs/decisions.md, "The catalogue and the
 * market at scale"). A comparable's group is its make key, model key, year and the UTC month of its
 * sale date ('YYYY-MM'); a server keeps each group's comparables in memory (market/comparables-cache.ts)
 * and rebuilds a group only when its generation here has moved. Every import batch bumps, in its own
 * transaction, the groups its written lots leave or enter, so a process reads nothing stale whatever
 * wrote the lots (this server, a CLI import, another instance on PostgreSQL).
 *
 * The row ('', '', 0, '') is the global epoch: a first bulk load into an empty catalogue bumps it
 * once a batch instead of every group the batch touches, and every cached group is then stale. No
 * make or model key is empty (marketKey gives null for a name without a letter or digit).
 *
 * No backfill: a group without a row is at generation 0, as every cache starts empty.
 * On SQLite the table is WITHOUT ROWID: the primary key is the table, one B-tree instead of two.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  await db.schema
    .createTable('market_groups')
    .addColumn('make_key', 'text', (c) => c.notNull())
    .addColumn('model_key', 'text', (c) => c.notNull())
    .addColumn('year', 'integer', (c) => c.notNull())
    .addColumn('month', 'text', (c) => c.notNull())
    .addColumn('generation', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('market_groups_pkey', ['make_key', 'model_key', 'year', 'month'])
    .$call((builder) => (postgres ? builder : builder.modifyEnd(sql`without rowid`)))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('market_groups').execute();
}
