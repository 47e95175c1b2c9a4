import type { Db } from '../database.ts';

/** A signing key as stored: the public JWK (JSON text) and the sealed private key. */
export interface StoredSigningKey {
  id: string;
  publicJwk: string;
  privateSealed: string;
  createdAt: string;
}

export interface StoredReportSignature {
  reportId: string;
  keyId: string;
  issuer: string;
  issuedAt: string;
  signature: string;
}

/** The report signing keys and the signatures made with them (0020). */
export class ReportSignaturesRepository {
  constructor(private readonly db: Db) {}

  async insertKey(key: StoredSigningKey): Promise<void> {
    await this.db.kysely
      .insertInto('signing_keys')
      .values({ id: key.id, public_jwk: key.publicJwk, private_sealed: key.privateSealed, created_at: key.createdAt })
      .execute();
  }

  /** Every key, newest first: the first is the one that signs. */
  async listKeys(): Promise<StoredSigningKey[]> {
    const rows = await this.db.kysely.selectFrom('signing_keys').selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
    return rows.map((row) => ({ id: row.id, publicJwk: row.public_jwk, privateSealed: row.private_sealed, createdAt: row.created_at }));
  }

  async currentKey(): Promise<StoredSigningKey | undefined> {
    const row = await this.db.kysely.selectFrom('signing_keys').selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(1).executeTakeFirst();
    return row && { id: row.id, publicJwk: row.public_jwk, privateSealed: row.private_sealed, createdAt: row.created_at };
  }

  async findSignature(reportId: string): Promise<StoredReportSignature | undefined> {
    const row = await this.db.kysely.selectFrom('report_signatures').selectAll().where('report_id', '=', reportId).executeTakeFirst();
    return row && { reportId: row.report_id, keyId: row.key_id, issuer: row.issuer, issuedAt: row.issued_at, signature: row.signature };
  }

  /**
   * Keeps the first signature of a report and answers the one kept: when two requests sign the same
   * report at once, one insert wins and both answer it, so a report has one signature for good.
   */
  async keepSignature(signature: StoredReportSignature): Promise<StoredReportSignature> {
    await this.db.kysely
      .insertInto('report_signatures')
      .values({ report_id: signature.reportId, key_id: signature.keyId, issuer: signature.issuer, issued_at: signature.issuedAt, signature: signature.signature })
      .onConflict((oc) => oc.column('report_id').doNothing())
      .execute();
    return (await this.findSignature(signature.reportId))!;
  }
}
