import type { Db } from '../database.ts';
import { AccountPasswordsRepository } from './account-passwords-repository.ts';
import { AccountsRepository, SubscriptionsRepository } from './accounts-repository.ts';
import { AuthAttemptsRepository } from './auth-attempts-repository.ts';
import { BillingRepository } from './billing-repository.ts';
import { InvoicesRepository } from './invoices-repository.ts';
import { LotsRepository } from './lots-repository.ts';
import { OperatorTokensRepository } from './operator-tokens-repository.ts';
import { PasswordResetsRepository } from './password-resets-repository.ts';
import { PlansRepository } from './plans-repository.ts';
import { ReportsRepository } from './reports-repository.ts';
import { SearchesRepository } from './searches-repository.ts';
import { SettingsRepository } from './settings-repository.ts';
import { TokensRepository } from './tokens-repository.ts';
import { WebSessionsRepository } from './web-sessions-repository.ts';

/** One set of repositories over Kysely, the same code for SQLite and PostgreSQL. */
export interface Repositories {
  plans: PlansRepository;
  accounts: AccountsRepository;
  subscriptions: SubscriptionsRepository;
  tokens: TokensRepository;
  lots: LotsRepository;
  reports: ReportsRepository;
  searches: SearchesRepository;
  // The customer's personal account (0003).
  settings: SettingsRepository;
  passwords: AccountPasswordsRepository;
  webSessions: WebSessionsRepository;
  passwordResets: PasswordResetsRepository;
  authAttempts: AuthAttemptsRepository;
  invoices: InvoicesRepository;
  billing: BillingRepository;
  // Tokens of the admin API (0004).
  operatorTokens: OperatorTokensRepository;
}

export function createRepositories(db: Db): Repositories {
  return {
    plans: new PlansRepository(db),
    accounts: new AccountsRepository(db),
    subscriptions: new SubscriptionsRepository(db),
    tokens: new TokensRepository(db),
    lots: new LotsRepository(db),
    reports: new ReportsRepository(db),
    searches: new SearchesRepository(db),
    settings: new SettingsRepository(db),
    passwords: new AccountPasswordsRepository(db),
    webSessions: new WebSessionsRepository(db),
    passwordResets: new PasswordResetsRepository(db),
    authAttempts: new AuthAttemptsRepository(db),
    invoices: new InvoicesRepository(db),
    billing: new BillingRepository(db),
    operatorTokens: new OperatorTokensRepository(db),
  };
}
