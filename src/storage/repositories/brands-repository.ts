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

  async create(accountId: string, isDefault: boolean, fields: BrandFields, now: Date): Promise<AccountBrand> {
    const at = now.toISOString();
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
    await this.db.kysely.insertInto('brands').values(row).execute();
    return toBrand(row);
  }

  /** False when the brand is not the account's. */
  async update(accountId: string, brandId: string, fields: BrandFields, now: Date): Promise<boolean> {
    const logo =
      fields.logo === undefined
        ? {}
        : { logo_hash: fields.logo?.hash ?? null, logo_png: fields.logo ? fields.logo.png.toString('base64') : null };
    const result = await this.db.kysely
      .updateTable('brands')
      .set({ name: fields.name, accent: fields.accent, contact: fields.contact, report_base_url: fields.reportBaseUrl, updated_at: now.toISOString(), ...logo })
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
