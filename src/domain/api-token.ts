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
