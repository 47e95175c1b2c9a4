import type { Account } from '../domain/account.ts';
import type { Db } from '../storage/database.ts';
import type { Repositories } from '../storage/repositories/index.ts';
import { inTransaction } from '../storage/transaction.ts';
import type { AccountAuthService } from './account-auth-service.ts';

/** Ends the account's plan at its payment provider first; a refusal (Stripe unreachable) throws and deletes nothing. */
export interface PlanEnder {
  endNow(account: Account, now: Date): Promise<unknown>;
}

export type DeletionOutcome =
  | { kind: 'deleted' }
  | { kind: 'wrong-password'; message: string }
  | { kind: 'throttled'; retryAfterMs: number };

/**
 * A customer deletes their account. What the operator's ledger needs stays: invoices (with the
 * buyer's details they were issued with), payments, the searches made and their reports, usage
 * counts, and the account row they refer to, with the address it had. What only served the
 * customer goes: the plan ends at once (Stripe stops charging; unpaid invoices are void), every
 * token is revoked, every browser session ends, the password and any reset link are deleted, and
 * the address is freed for a new account.
 */
export class AccountDeletionService {
  constructor(private readonly deps: { db: Db; repos: Repositories; auth: AccountAuthService; plans: PlanEnder }) {}

  /** `password` is checked when the account has one (an account the operator made may have none). */
  async delete(account: Account, password: unknown, now = new Date()): Promise<DeletionOutcome> {
    if (await this.deps.auth.hasPassword(account.id)) {
      const checked = await this.deps.auth.checkCurrentPassword(account.id, password, now);
      if (checked.kind !== 'ok') return checked.kind === 'wrong' ? { kind: 'wrong-password', message: checked.message } : checked;
    }
    // Outside the transaction: a provider call may take seconds, and if it fails nothing here changes.
    await this.deps.plans.endNow(account, now);
    await inTransaction(this.deps.db, async (repos) => {
      await repos.invoices.voidOpenManual(account.id, now);
      await repos.tokens.revokeAllForAccount(account.id, now);
      await repos.webSessions.deleteForAccount(account.id);
      await repos.passwordResets.invalidateForAccount(account.id, now);
      await repos.passwords.delete(account.id);
      await repos.accounts.markDeleted(account.id, now);
    });
    return { kind: 'deleted' };
  }
}
