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

  /** The account with this email, made (without a password) if there is none. */
  async findOrCreate(email: string, now = new Date()): Promise<Account> {
    const existing = await this.findByEmail(email);
    if (existing) return existing;
    try {
      return await this.repos.accounts.create(email, now);
    } catch (error) {
      // Two processes at once on one PostgreSQL database: the other one made it first.
      const made = await this.findByEmail(email);
      if (made) return made;
      throw error;
    }
  }
}
