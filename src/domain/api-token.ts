import { createHash, randomBytes } from 'node:crypto';

/**
 * A token is `vh_live_` + 32 base62 characters from 24 random bytes (192 bits). It is shown once;
 * the database keeps only its SHA-256. A slow password hash would add nothing here: with 192 bits of
 * entropy there is no dictionary to attack, and a fast hash keeps authentication a single index probe.
 */
export const TOKEN_PREFIX = 'vh_live_';
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const TOKEN_PATTERN = /^vh_live_[0-9A-Za-z]{32}$/;

export interface NewApiToken {
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

export function generateApiToken(): NewApiToken {
  const token = TOKEN_PREFIX + toBase62(randomBytes(24), 32);
  return { token, hash: hashApiToken(token), displayPrefix: token.slice(0, TOKEN_PREFIX.length + 4) };
}

export function hashApiToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export function looksLikeApiToken(value: string): boolean {
  return TOKEN_PATTERN.test(value);
}

/**
 * `Authorization: <token>` is the documented form; `Bearer <token>` (any case) is accepted too.
 * Returns null for anything else, so that the caller answers 401 without touching the database.
 */
export function tokenFromAuthorization(header: string | undefined): string | null {
  if (!header) return null;
  const value = header.trim();
  const match = /^bearer\s+(\S+)$/i.exec(value);
  const candidate = match ? match[1]! : value;
  return looksLikeApiToken(candidate) ? candidate : null;
}
