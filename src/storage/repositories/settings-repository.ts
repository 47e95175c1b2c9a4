import type { Db } from '../database.ts';

/** Deployment-wide values in the database, so that every instance of a scaled-out service shares them. */
export class SettingsRepository {
  constructor(private readonly db: Db) {}

  async get(key: string): Promise<string | undefined> {
    const row = await this.db.kysely.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirst();
    return row?.value;
  }

  /**
   * The stored value, made and stored by `make` if there is none yet. Insert-if-absent then read
   * back: when several instances start at once on an empty database, one insert wins and every
   * instance reads that same value.
   */
  async getOrCreate(key: string, make: () => string, now = new Date()): Promise<string> {
    await this.db.kysely
      .insertInto('settings')
      .values({ key, value: make(), created_at: now.toISOString() })
      .onConflict((oc) => oc.column('key').doNothing())
      .execute();
    const row = await this.db.kysely.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirstOrThrow();
    return row.value;
  }

  /** Sets a value (an operator's choice, such as the bank details shown on invoices). */
  async set(key: string, value: string, now = new Date()): Promise<void> {
    await this.db.kysely
      .insertInto('settings')
      .values({ key, value, created_at: now.toISOString() })
      .onConflict((oc) => oc.column('key').doUpdateSet({ value }))
      .execute();
  }

  async delete(key: string): Promise<void> {
    await this.db.kysely.deleteFrom('settings').where('key', '=', key).execute();
  }
}
