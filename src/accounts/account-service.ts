import type { Account } from '../domain/account.ts';
import { isReportLanguage, type ReportLanguage } from '../domain/report-language.ts';
import type { Repositories } from '../storage/repositories/index.ts';

/** Finding a customer's account: by the session's account id (the pages), by email (the operator's CLI). */
export class AccountService {
  constructor(private readonly repos: Repositories) {}

  findById(id: string): Promise<Account | undefined> {
    return this.repos.accounts.findById(id);
  }

  /** The language the account's reports open in; undefined for an account that does not exist. */
  async defaultLanguage(id: string): Promise<ReportLanguage | null | undefined> {
    return (await this.repos.accounts.findById(id))?.defaultLanguage;
  }

  /**
   * Sets the language the account's reports open in when the link names none: a report language
   * code, or '' for none (the reader's browser decides). Anything else is refused.
   */
  async setDefaultLanguage(id: string, value: unknown): Promise<{ kind: 'saved'; language: ReportLanguage | null } | { kind: 'invalid'; message: string }> {
    if (value !== '' && !isReportLanguage(value)) return { kind: 'invalid', message: 'Choose one of the languages in the list.' };
    const language = value === '' ? null : value;
    await this.repos.accounts.setDefaultLanguage(id, language);
    return { kind: 'saved', language };
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
