import type { OperatorToken } from '../domain/operator-token.ts';
import type { OperatorPrincipal } from '../domain/principal.ts';
import type { Repositories } from '../storage/repositories/index.ts';

/** Tokens of the admin API: issued, listed and revoked by the operator's CLI, checked on each admin request. */
export class OperatorTokenService {
  constructor(private readonly repos: Repositories) {}

  /** The live token with this secret, marked used; null otherwise. */
  authenticate(secret: string, now = new Date()): Promise<OperatorPrincipal | null> {
    return this.repos.operatorTokens.authenticate(secret, now);
  }

  async issue(name: string, now = new Date()): Promise<{ token: OperatorToken; secret: string }> {
    const { row, token } = await this.repos.operatorTokens.create(name, now);
    return { token: row, secret: token };
  }

  /** Newest first, revoked ones included. */
  list(): Promise<OperatorToken[]> {
    return this.repos.operatorTokens.list();
  }

  /** False when no live token has this id. */
  revokeById(id: string, now = new Date()): Promise<boolean> {
    return this.repos.operatorTokens.revokeById(id, now);
  }

  /** False when no live token has this secret. */
  revokeBySecret(secret: string, now = new Date()): Promise<boolean> {
    return this.repos.operatorTokens.revokeByToken(secret, now);
  }
}
