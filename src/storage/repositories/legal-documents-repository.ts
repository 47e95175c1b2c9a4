import type { Db } from '../database.ts';

export type StoredLegalName = 'terms' | 'privacy';

export interface StoredLegalDocument {
  markdown: string;
  updatedAt: string;
}

/** The operator's legal pages kept in the database, where every instance reads the same text. */
export class LegalDocumentsRepository {
  constructor(private readonly db: Db) {}

  async find(name: StoredLegalName): Promise<StoredLegalDocument | undefined> {
    const row = await this.db.kysely.selectFrom('legal_documents').select(['markdown', 'updated_at']).where('name', '=', name).executeTakeFirst();
    return row && { markdown: row.markdown, updatedAt: row.updated_at };
  }

  async set(name: StoredLegalName, markdown: string, now: Date): Promise<void> {
    const updatedAt = now.toISOString();
    await this.db.kysely
      .insertInto('legal_documents')
      .values({ name, markdown, updated_at: updatedAt })
      .onConflict((oc) => oc.column('name').doUpdateSet({ markdown, updated_at: updatedAt }))
      .execute();
  }

  /** False when there was none. */
  async remove(name: StoredLegalName): Promise<boolean> {
    const result = await this.db.kysely.deleteFrom('legal_documents').where('name', '=', name).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }
}
