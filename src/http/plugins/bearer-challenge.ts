import { ApiError, UNAUTHENTICATED_MESSAGE } from '../../errors.ts';

/**
 * The 401 of a bearer-token hook, with its `WWW-Authenticate` challenge (RFC 6750): a request
 * that sent no credentials gets the bare challenge; one that sent a token we refuse is also told
 * `invalid_token`.
 */
export function bearerChallenge(realm: string, invalidToken: boolean): ApiError {
  const challenge = `Bearer realm="${realm}"`;
  return new ApiError('UNAUTHENTICATED', UNAUTHENTICATED_MESSAGE, {
    headers: { 'www-authenticate': invalidToken ? `${challenge}, error="invalid_token"` : challenge },
  });
}
