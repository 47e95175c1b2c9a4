import { newId } from './ids.ts';
import { SecretTokenFormat, type NewSecretToken } from './secret-token.ts';

/**
 * Operator tokens open the admin API (POST /admin/v1/lots): `vh_op_` + 32 base62 characters, in a
 * table of their own, never interchangeable with customer tokens (`vh_live_`).
 */
export const OPERATOR_TOKEN_PREFIX = 'vh_op_';
const OPERATOR_TOKENS = new SecretTokenFormat(OPERATOR_TOKEN_PREFIX);

export type NewOperatorToken = NewSecretToken;

export const generateOperatorToken = (): NewOperatorToken => OPERATOR_TOKENS.generate();
export const hashOperatorToken = (token: string): string => OPERATOR_TOKENS.hash(token);
export const looksLikeOperatorToken = (value: string): boolean => OPERATOR_TOKENS.looksLike(value);
export const operatorTokenDisplayPrefix = (token: string): string => OPERATOR_TOKENS.displayPrefix(token);
export const operatorTokenFromAuthorization = (header: string | undefined): string | null => OPERATOR_TOKENS.fromAuthorization(header);

/** `optok_` + 16 base36 characters: prefixed like the other ids, for logs and lists. */
export const newOperatorTokenId = (): string => newId('optok');

/** An operator token as listed: never its secret, nor the secret's hash. */
export interface OperatorToken {
  id: string;
  name: string;
  displayPrefix: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}
