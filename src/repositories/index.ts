import type { Db } from '../db/database.ts';
import { AccountsRepository, SubscriptionsRepository } from './accounts-repository.ts';
import { LotsRepository } from './lots-repository.ts';
import { PlansRepository } from './plans-repository.ts';
import { ReportsRepository } from './reports-repository.ts';
import { SearchesRepository } from './searches-repository.ts';
import { TokensRepository } from './tokens-repository.ts';

/** One set of repositories over Kysely, the same code for SQLite and PostgreSQL. */
export interface Repositories {
  plans: PlansRepository;
  accounts: AccountsRepository;
  subscriptions: SubscriptionsRepository;
  tokens: TokensRepository;
  lots: LotsRepository;
  reports: ReportsRepository;
  searches: SearchesRepository;
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
  };
}
