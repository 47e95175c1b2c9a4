import type { Db } from '../database.ts';
import { revokeLiveToken } from './revoke-token.ts';
import type { OperatorTokenRow } from '../schema.ts';
import type { OperatorPrincipal } from '../../domain/principal.ts';
import { generateOperatorToken, hashOperatorToken, newOperatorTokenId, type OperatorToken } from '../../domain/operator-token.ts';

function toOperatorToken(row: OperatorTokenRow): OperatorToken {
  return {
    id: row.id,
    name: row.name,
    displayPrefix: row.display_prefix,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
    revokedAt: row.revoked_at,
  };
}


/** Tokens of the admin API (0004-operator-tokens). */
export class OperatorTokensRepository {
  constructor(private readonly db: Db) {}

  /** Creates a token and returns its secret, which is not stored and cannot be shown again. */
  async create(name: string, now = new Date()): Promise<{ row: OperatorToken; token: string }> {
    const secret = generateOperatorToken();
    const row: OperatorTokenRow = {
      id: newOperatorTokenId(),
      name,
      token_hash: secret.hash,
      display_prefix: secret.displayPrefix,
      created_at: now.toISOString(),
      last_used_at: null,
      revoked_at: null,
    };
    await this.db.kysely.insertInto('operator_tokens').values(row).execute();
    return { row: toOperatorToken(row), token: secret.token };
  }

  /** Newest first, revoked ones included (with revoked_at set). */
  async list(): Promise<OperatorToken[]> {
    const rows = await this.db.kysely.selectFrom('operator_tokens').selectAll().orderBy('created_at', 'desc').orderBy('id').execute();
    return rows.map(toOperatorToken);
  }

  /** Revokes by the secret itself. False when no live token has that value. */
  async revokeByToken(token: string, now = new Date()): Promise<boolean> {
    return revokeLiveToken(this.db.kysely, { table: 'operator_tokens', column: 'token_hash', value: hashOperatorToken(token) }, now);
  }

  /** Revokes by id (as `list` shows it). False when no live token has that id. */
  async revokeById(id: string, now = new Date()): Promise<boolean> {
    return revokeLiveToken(this.db.kysely, { table: 'operator_tokens', column: 'id', value: id }, now);
  }

  /**
   * The live token with this secret: one probe of the unique token_hash index, nothing cached, so
   * a revocation takes effect on the next request on every instance. Marks it used.
   */
  async authenticate(token: string, now = new Date()): Promise<OperatorPrincipal | null> {
    const row = await this.db.kysely
      .selectFrom('operator_tokens')
      .select(['id', 'name'])
      .where('token_hash', '=', hashOperatorToken(token))
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    if (!row) return null;
    await this.db.kysely.updateTable('operator_tokens').set({ last_used_at: now.toISOString() }).where('id', '=', row.id).execute();
    return { tokenId: row.id, name: row.name };
  }
}
