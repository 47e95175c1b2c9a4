import { sql, type Kysely } from 'kysely';
import type { StorageDialect } from './dialects/dialect.ts';
import type { Database } from './schema.ts';

/** What these need of a Db (database.ts, a floor above, runs buildDeferredIndexes at every start). */
interface IndexedDb {
  kysely: Kysely<Database>;
  dialect: StorageDialect;
}

/**
 * Indexes built after a bulk load into an empty lots table (the first `vinhistory import`, the
 * seed) instead of during it (docs/decisions.md, "Indexes built after a first bulk load"). Kept
 * during the load, every batch writes each new lot into every secondary index at a random place
 * (lot ids, VINs, makes and sale dates arrive in no order): a page a lot an index, written again
 * at each checkpoint. Built after, each index is one sort of the table.
 *
 * Each dropped index's definition is stored in `settings` (key `deferred-index:<name>`) in the
 * transaction that drops it, so a load that dies half-way leaves the database knowing what it
 * owes: migrateToLatest, at every start of the server and of every command, builds whatever is
 * still recorded there. The primary key and unique indexes stay: the upsert's ON CONFLICT and the
 * batch's keyed reads use them.
 */
const PREFIX = 'deferred-index:';

/**
 * Drops the lots table's secondary indexes if the table is empty, recording their definitions
 * first, all in one transaction. Returns whether it dropped any: the caller builds them again
 * when its load ends (buildDeferredIndexes), or the next start does.
 */
export async function deferLotsIndexesWhileEmpty(db: IndexedDb, now = new Date()): Promise<boolean> {
  return db.kysely.transaction().execute(async (tx) => {
    const stored = await tx.selectFrom('lots').select('lot_id').limit(1).executeTakeFirst();
    if (stored) return false;
    const indexes = await db.dialect.secondaryLotsIndexes(tx);
    for (const index of indexes) {
      await tx
        .insertInto('settings')
        .values({ key: `${PREFIX}${index.name}`, value: index.definition, created_at: now.toISOString() })
        .onConflict((oc) => oc.column('key').doUpdateSet({ value: index.definition }))
        .execute();
      await sql`drop index ${sql.id(index.name)}`.execute(tx);
    }
    return indexes.length > 0;
  });
}

/**
 * Builds every index a bulk load dropped and did not build again (its load ended, or its process
 * died), each in a transaction that also forgets its record. Returns the names built. Nothing to
 * do, the common case, costs one read of `settings`.
 */
export async function buildDeferredIndexes(db: IndexedDb): Promise<string[]> {
  const owed = await db.kysely.selectFrom('settings').select(['key', 'value']).where('key', 'like', `${PREFIX}%`).orderBy('key').execute();
  const built: string[] = [];
  for (const { key, value } of owed) {
    const name = key.slice(PREFIX.length);
    await db.kysely.transaction().execute(async (tx) => {
      // Another process (a server starting beside the load) may have built it and forgotten it already.
      const still = await tx.selectFrom('settings').select('key').where('key', '=', key).executeTakeFirst();
      if (!still) return;
      if (!(await db.dialect.indexExists(tx, name))) {
        await db.dialect.buildIndex(tx, value);
        built.push(name);
      }
      await tx.deleteFrom('settings').where('key', '=', key).execute();
    });
  }
  return built;
}
