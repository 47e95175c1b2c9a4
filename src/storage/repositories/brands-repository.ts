import { sql } from 'kysely';
import type { Db } from '../database.ts';
import type { BrandRow } from '../schema.ts';
import type { AccountBrand } from '../../domain/brand.ts';
import { newId } from '../../domain/ids.ts';

function toBrand(row: Omit<BrandRow, 'logo_png'>): AccountBrand {
  return {
    id: row.id,
    accountId: row.account_id,
    isDefault: row.is_default === 1,
    name: row.name,
    logoHash: row.logo_hash,
    accent: row.accent,
    contact: row.contact,
    reportBaseUrl: row.report_base_url,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** What a brand's form sets. `logo` undefined keeps the stored logo; null removes it. */
export interface BrandFields {
  name: string;
  accent: string | null;
  contact: string | null;
  reportBaseUrl: string | null;
  logo?: { hash: string; png: Buffer } | null;
}

/** The columns a save sets on an existing brand; the logo's only when the form gave or removed one. */
function updateOf(fields: BrandFields, at: string) {
  const logo =
    fields.logo === undefined ? {} : { logo_hash: fields.logo?.hash ?? null, logo_png: fields.logo ? fields.logo.png.toString('base64') : null };
  return { name: fields.name, accent: fields.accent, contact: fields.contact, report_base_url: fields.reportBaseUrl, updated_at: at, ...logo };
}

const COLUMNS = ['id', 'account_id', 'is_default', 'name', 'logo_hash', 'accent', 'contact', 'report_base_url', 'created_at', 'updated_at'] as const;

export class BrandsRepository {
  constructor(private readonly db: Db) {}

  /** The default brand first, then the named ones by name; the logos' bytes stay in the table. */
  async listForAccount(accountId: string): Promise<AccountBrand[]> {
    const rows = await this.db.kysely
      .selectFrom('brands')
      .select(COLUMNS)
      .where('account_id', '=', accountId)
      .orderBy('is_default', 'desc')
      .orderBy('name')
      .orderBy('id')
      .execute();
    return rows.map(toBrand);
  }

  /**
   * Makes a brand under the account's limits, counted and written in one transaction: the
   * account's default (made, or edited when there is one already: at most one per account, which
   * the unique index brands_one_default_idx also holds), or a named one while fewer than
   * `namedLimit` exist. The transaction first writes the account's row, which on PostgreSQL locks
   * it until the commit, so saves of one account take turns and each counts what the others
   * committed (on SQLite every write transaction takes turns already). Without it, 30 concurrent
   * saves made 28-30 named brands where 20 are allowed (issue 28, F8).
   */
  async create(accountId: string, isDefault: boolean, fields: BrandFields, now: Date, namedLimit: number): Promise<AccountBrand | 'too-many' | 'no-account'> {
    return this.db.kysely.transaction().execute(async (trx) => {
      const locked = await trx.updateTable('accounts').set({ id: sql.ref('id') }).where('id', '=', accountId).executeTakeFirst();
      if (Number(locked.numUpdatedRows) === 0) return 'no-account';
      const at = now.toISOString();
      if (isDefault) {
        const existing = await trx.selectFrom('brands').select('id').where('account_id', '=', accountId).where('is_default', '=', 1).executeTakeFirst();
        if (existing) {
          await trx.updateTable('brands').set(updateOf(fields, at)).where('id', '=', existing.id).execute();
          const row = await trx.selectFrom('brands').select(COLUMNS).where('id', '=', existing.id).executeTakeFirstOrThrow();
          return toBrand(row);
        }
      } else {
        const { named } = await trx
          .selectFrom('brands')
          .select((eb) => eb.fn.countAll<number | string>().as('named'))
          .where('account_id', '=', accountId)
          .where('is_default', '=', 0)
          .executeTakeFirstOrThrow();
        if (Number(named) >= namedLimit) return 'too-many';
      }
      const row: BrandRow = {
        id: newId('brd'),
        account_id: accountId,
        is_default: isDefault ? 1 : 0,
        name: fields.name,
        logo_hash: fields.logo?.hash ?? null,
        logo_png: fields.logo ? fields.logo.png.toString('base64') : null,
        accent: fields.accent,
        contact: fields.contact,
        report_base_url: fields.reportBaseUrl,
        created_at: at,
        updated_at: at,
      };
      await trx.insertInto('brands').values(row).execute();
      return toBrand(row);
    });
  }

  /** False when the brand is not the account's. */
  async update(accountId: string, brandId: string, fields: BrandFields, now: Date): Promise<boolean> {
    const result = await this.db.kysely
      .updateTable('brands')
      .set(updateOf(fields, now.toISOString()))
      .where('id', '=', brandId)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** Removes the brand and takes it off the account's tokens, in one transaction. False when it is not the account's. */
  async delete(accountId: string, brandId: string): Promise<boolean> {
    return this.db.kysely.transaction().execute(async (trx) => {
      const result = await trx.deleteFrom('brands').where('id', '=', brandId).where('account_id', '=', accountId).executeTakeFirst();
      if (Number(result.numDeletedRows) === 0) return false;
      await trx.updateTable('api_tokens').set({ brand_id: null }).where('account_id', '=', accountId).where('brand_id', '=', brandId).execute();
      return true;
    });
  }

  /** The PNG of a logo by its hash (any account's: the hash is the address a report links). */
  async logo(hash: string): Promise<Buffer | null> {
    const row = await this.db.kysely.selectFrom('brands').select('logo_png').where('logo_hash', '=', hash).where('logo_png', 'is not', null).limit(1).executeTakeFirst();
    return row?.logo_png ? Buffer.from(row.logo_png, 'base64') : null;
  }

  /** Each of the account's tokens that carries a brand of its own, with that brand's id. */
  async tokenBrands(accountId: string): Promise<Map<string, string>> {
    const rows = await this.db.kysely
      .selectFrom('api_tokens')
      .select(['id', 'brand_id'])
      .where('account_id', '=', accountId)
      .where('brand_id', 'is not', null)
      .execute();
    return new Map(rows.map((row) => [row.id, row.brand_id!]));
  }

  /** Sets (or clears, with null) a token's brand. False when the token or the brand is not the account's. */
  async setTokenBrand(accountId: string, tokenId: string, brandId: string | null): Promise<boolean> {
    return this.db.kysely.transaction().execute(async (trx) => {
      if (brandId !== null) {
        const brand = await trx.selectFrom('brands').select('id').where('id', '=', brandId).where('account_id', '=', accountId).executeTakeFirst();
        if (!brand) return false;
      }
      const result = await trx.updateTable('api_tokens').set({ brand_id: brandId }).where('id', '=', tokenId).where('account_id', '=', accountId).executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    });
  }
}
