import type { Db } from '../database.ts';
import { AccountDirectoryRepository } from './account-directory-repository.ts';
import { OperatorAuditRepository } from './operator-audit-repository.ts';
import { AccountPasswordsRepository } from './account-passwords-repository.ts';
import { AccountsRepository, SubscriptionsRepository } from './accounts-repository.ts';
import { AuthAttemptsRepository } from './auth-attempts-repository.ts';
import { BillingRepository } from './billing-repository.ts';
import { BrandsRepository } from './brands-repository.ts';
import { InvoicesRepository } from './invoices-repository.ts';
import { LotsRepository } from './lots-repository.ts';
import { MediaRepository } from './media-repository.ts';
import { MailQueueRepository } from './mail-queue-repository.ts';
import { OperatorTokensRepository } from './operator-tokens-repository.ts';
import { PasswordResetsRepository } from './password-resets-repository.ts';
import { PlansRepository } from './plans-repository.ts';
import { IdempotencyKeysRepository } from './idempotency-keys-repository.ts';
import { ReportsRepository } from './reports-repository.ts';
import { SearchesRepository } from './searches-repository.ts';
import { UsageCountersRepository } from './usage-counters-repository.ts';
import type { SearchCommit, SearchCommitStores } from '../search-commit.ts';
import { SqliteSearchCommit } from '../dialects/sqlite/search-commit.ts';
import { SqliteSearchCommitThread } from '../dialects/sqlite/search-commit-thread.ts';
import { PostgresSearchCommit } from '../dialects/postgres/search-commit.ts';
import { SettingsRepository } from './settings-repository.ts';
import { TokensRepository } from './tokens-repository.ts';
import { WebSessionsRepository } from './web-sessions-repository.ts';
import { WatchesRepository } from './watches-repository.ts';
import { WebhookEndpointsRepository } from './webhook-endpoints-repository.ts';
import { WebhookOutboxRepository } from './webhook-outbox-repository.ts';

/** One set of repositories over Kysely, the same code for SQLite and PostgreSQL. */
export interface Repositories {
  plans: PlansRepository;
  accounts: AccountsRepository;
  subscriptions: SubscriptionsRepository;
  tokens: TokensRepository;
  lots: LotsRepository;
  reports: ReportsRepository;
  searches: SearchesRepository;
  usageCounters: UsageCountersRepository;
  idempotencyKeys: IdempotencyKeysRepository;
  /** Commits a counted search across the four above, all or nothing. */
  searchCommit: SearchCommit;
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
  // Account mail, sent after the request by the delivery worker (0006).
  mailQueue: MailQueueRepository;
  // Watches and webhooks (0007).
  watches: WatchesRepository;
  webhookEndpoints: WebhookEndpointsRepository;
  webhookOutbox: WebhookOutboxRepository;
  // The photo archive's queue and contents (0008).
  media: MediaRepository;
  // White-label brands (0012).
  brands: BrandsRepository;
  // The operators' tools (0015): the account listing and the audit log.
  accountDirectory: AccountDirectoryRepository;
  operatorAudit: OperatorAuditRepository;
}

export interface RepositoryOptions {
  /** The photo archive is on: storing a lot queues its image URLs (lots-repository.ts). */
  queueMediaImages?: boolean;
}

/** Each dialect's search commit; on SQLite in the server, on a thread of its own (stopped when the database closes). */
function searchCommitFor(db: Db, ledger: SearchCommitStores): SearchCommit {
  if (db.dialect === 'postgres') return new PostgresSearchCommit(db, ledger);
  if (db.sqliteCommitThread === null) return new SqliteSearchCommit(db, ledger);
  const thread = new SqliteSearchCommitThread(db.sqliteCommitThread);
  db.onClose(() => thread.close());
  return thread;
}

/** What a search's commit writes and reads: its own statements come from these. */
export function createLedgerStores(db: Db): SearchCommitStores {
  return {
    reports: new ReportsRepository(db),
    searches: new SearchesRepository(db),
    usageCounters: new UsageCountersRepository(db),
    idempotencyKeys: new IdempotencyKeysRepository(db),
  };
}

export function createRepositories(db: Db, options: RepositoryOptions = {}): Repositories {
  const ledger = createLedgerStores(db);
  return {
    plans: new PlansRepository(db),
    accounts: new AccountsRepository(db),
    subscriptions: new SubscriptionsRepository(db),
    tokens: new TokensRepository(db),
    lots: new LotsRepository(db, { queueImages: options.queueMediaImages === true }),
    ...ledger,
    searchCommit: searchCommitFor(db, ledger),
    settings: new SettingsRepository(db),
    brands: new BrandsRepository(db),
    accountDirectory: new AccountDirectoryRepository(db),
    operatorAudit: new OperatorAuditRepository(db),
    passwords: new AccountPasswordsRepository(db),
    webSessions: new WebSessionsRepository(db),
    passwordResets: new PasswordResetsRepository(db),
    authAttempts: new AuthAttemptsRepository(db),
    invoices: new InvoicesRepository(db),
    billing: new BillingRepository(db),
    operatorTokens: new OperatorTokensRepository(db),
    mailQueue: new MailQueueRepository(db),
    watches: new WatchesRepository(db),
    webhookEndpoints: new WebhookEndpointsRepository(db),
    webhookOutbox: new WebhookOutboxRepository(db),
    media: new MediaRepository(db),
  };
}
