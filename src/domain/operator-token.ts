import { createHash, randomBytes } from 'node:crypto';

/**
 * Operator tokens open the admin API (POST /admin/v1/lots): `vh_op_` + 32 base62 characters from
 * 24 random bytes. A different prefix from customer tokens (`vh_live_`) and a different table, so
 * that neither can ever pass for the other, and a leaked one is recognisable at a glance. Only the
 * SHA-256 is stored, as for customer tokens (api-token.ts explains why a fast hash is right here).
 */
export const OPERATOR_TOKEN_PREFIX = 'vh_op_';
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const OPERATOR_TOKEN_PATTERN = /^vh_op_[0-9A-Za-z]{32}$/;

export interface NewOperatorToken {
  /** The secret, to show once. */
  token: string;
  hash: string;
  /** The non-secret beginning, kept to tell tokens apart in lists. */
  displayPrefix: string;
}

function toBase62(bytes: Buffer, length: number): string {
  let value = BigInt(`0x${bytes.toString('hex')}`);
  let out = '';
  while (out.length < length) {
    out = BASE62[Number(value % 62n)] + out;
    value /= 62n;
  }
  return out;
}

export function generateOperatorToken(): NewOperatorToken {
  const token = OPERATOR_TOKEN_PREFIX + toBase62(randomBytes(24), 32);
  return { token, hash: hashOperatorToken(token), displayPrefix: token.slice(0, OPERATOR_TOKEN_PREFIX.length + 4) };
}

export function hashOperatorToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export function looksLikeOperatorToken(value: string): boolean {
  return OPERATOR_TOKEN_PATTERN.test(value);
}

/** `Authorization: <token>` or `Bearer <token>`, as for the customer API; null for anything else. */
export function operatorTokenFromAuthorization(header: string | undefined): string | null {
  if (!header) return null;
  const value = header.trim();
  const match = /^bearer\s+(\S+)$/i.exec(value);
  const candidate = match ? match[1]! : value;
  return looksLikeOperatorToken(candidate) ? candidate : null;
}

const ID_ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';

/** `optok_` + 16 base36 characters: prefixed like the other ids, for logs and lists. */
export function newOperatorTokenId(): string {
  let out = '';
  for (const byte of randomBytes(16)) out += ID_ALPHABET[byte % 36];
  return `optok_${out}`;
}
