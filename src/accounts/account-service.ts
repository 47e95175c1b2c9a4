import type { Account } from '../domain/account.ts';
import type { Repositories } from '../storage/repositories/index.ts';

/** Finding a customer's account: by the session's account id (the pages), by email (the operator's CLI). */
export class AccountService {
  constructor(private readonly repos: Repositories) {}

  findById(id: string): Promise<Account | undefined> {
    return this.repos.accounts.findById(id);
  }

  /** Any case, surrounding blanks ignored. */
  findByEmail(email: string): Promise<Account | undefined> {
    return this.repos.accounts.findByEmail(email);
  }
}
