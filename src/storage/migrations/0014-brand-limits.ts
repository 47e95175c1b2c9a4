import { sql, type Kysely } from 'kysely';

/**
 * At most one default brand per account, held by the database (issue 28, F8): concurrent first
 * saves of the default each made one. Defaults made that way before this migration are kept as
 * named brands, all but the oldest, so that nothing a customer saved is lost and the index can
 * be built.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db
    .updateTable('brands as b')
    .set({ is_default: 0 })
    .where('b.is_default', '=', 1)
    .where((outer) =>
      outer.exists(
        outer
          .selectFrom('brands as older')
          .select('older.id')
          .whereRef('older.account_id', '=', 'b.account_id')
          .where('older.is_default', '=', 1)
          .where((eb) => eb.or([eb('older.created_at', '<', eb.ref('b.created_at')), eb.and([eb('older.created_at', '=', eb.ref('b.created_at')), eb('older.id', '<', eb.ref('b.id'))])])),
      ),
    )
    .execute();
  await db.schema.createIndex('brands_one_default_idx').unique().on('brands').column('account_id').where(sql.ref('is_default'), '=', 1).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('brands_one_default_idx').execute();
}
