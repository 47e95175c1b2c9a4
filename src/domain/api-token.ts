import { SecretTokenFormat, type NewSecretToken } from './secret-token.ts';

/** Customer API tokens: `vh_live_` + 32 base62 characters, shown once, stored as SHA-256. */
export const TOKEN_PREFIX = 'vh_live_';
/**
 * Sandbox (test) tokens: `vh_test_` + 32 base62 characters. They search only the sandbox
 * catalogue (search/sandbox/), are never counted, and work without a subscription. A prefix of
 * their own lets a customer (and a log reader) tell at a glance which kind a token is.
 */
export const TEST_TOKEN_PREFIX = 'vh_test_';
const API_TOKENS = new SecretTokenFormat(TOKEN_PREFIX);
const TEST_TOKENS = new SecretTokenFormat(TEST_TOKEN_PREFIX);

export type NewApiToken = NewSecretToken;
export type ApiTokenKind = 'live' | 'test';

const formatOf = (kind: ApiTokenKind) => (kind === 'test' ? TEST_TOKENS : API_TOKENS);

export const generateApiToken = (kind: ApiTokenKind = 'live'): NewApiToken => formatOf(kind).generate();
/** Both kinds hash alike (SHA-256 of the whole token, prefix included), so one index finds either. */
export const hashApiToken = (token: string): string => API_TOKENS.hash(token);
/** A live or a test token. */
export const looksLikeApiToken = (value: string): boolean => API_TOKENS.looksLike(value) || TEST_TOKENS.looksLike(value);
export const tokenFromAuthorization = (header: string | undefined): string | null =>
  API_TOKENS.fromAuthorization(header) ?? TEST_TOKENS.fromAuthorization(header);

/** How long a rotated token keeps working next to its successor. */
export const TOKEN_ROTATION_GRACE_MS = 24 * 60 * 60 * 1000;

/** A customer API token as listed: never its secret, nor the secret's hash. */
export interface ApiToken {
  id: string;
  accountId: string;
  name: string;
  /** `test` for a sandbox token (`vh_test_...`). */
  kind: ApiTokenKind;
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
