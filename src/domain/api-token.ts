import { SecretTokenFormat, type NewSecretToken } from './secret-token.ts';

/** Customer API tokens: `vh_live_` + 32 base62 characters, shown once, stored as SHA-256. */
export const TOKEN_PREFIX = 'vh_live_';
const API_TOKENS = new SecretTokenFormat(TOKEN_PREFIX);

export type NewApiToken = NewSecretToken;

export const generateApiToken = (): NewApiToken => API_TOKENS.generate();
export const hashApiToken = (token: string): string => API_TOKENS.hash(token);
export const looksLikeApiToken = (value: string): boolean => API_TOKENS.looksLike(value);
export const tokenFromAuthorization = (header: string | undefined): string | null => API_TOKENS.fromAuthorization(header);

/** How long a rotated token keeps working next to its successor. */
export const TOKEN_ROTATION_GRACE_MS = 24 * 60 * 60 * 1000;

/** A customer API token as listed: never its secret, nor the secret's hash. */
export interface ApiToken {
  id: string;
  accountId: string;
  name: string;
  /** The first characters of the secret, to tell tokens apart. */
  displayPrefix: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
  /** Set when the token is rotated: it keeps working until then. */
  expiresAt: string | null;
}

/** Not revoked, and not past the end of a rotation's grace. */
export function isLiveToken(token: ApiToken, now: Date): boolean {
  return token.revokedAt === null && (token.expiresAt === null || token.expiresAt > now.toISOString());
}
