import type { Db } from '../database.ts';
import { AccountDirectoryRepository } from './account-directory-repository.ts';
import { OperatorAuditRepository } from './operator-audit-repository.ts';
import { AccountPasswordsRepository } from './account-passwords-repository.ts';
import { AccountsRepository, SubscriptionsRepository } from './accounts-repository.ts';
import { AuthAttemptsRepository } from './auth-attempts-repository.ts';
import { BillingRepository } from './billing-repository.ts';
import { BillingNoticesRepository } from './billing-notices-repository.ts';
import { LegalDocumentsRepository } from './legal-documents-repository.ts';
import { BrandsRepository } from './brands-repository.ts';
import { InvoicesRepository } from './invoices-repository.ts';
import { LotsRepository } from './lots-repository.ts';
import { LotHistoryRepository } from './lot-history-repository.ts';
import type { LotsWrittenHook } from './lots-written.ts';
import { MediaRepository } from './media-repository.ts';
import { MarketRepository } from './market-repository.ts';
import { MailQueueRepository } from './mail-queue-repository.ts';
import { OperatorTokensRepository } from './operator-tokens-repository.ts';
import { PasswordResetsRepository } from './password-resets-repository.ts';
import { PlansRepository } from './plans-repository.ts';
import { IdempotencyKeysRepository } from './idempotency-keys-repository.ts';
import { ReportsRepository } from './reports-repository.ts';
import { ReportSignaturesRepository } from './report-signatures-repository.ts';
import { SearchesRepository } from './searches-repository.ts';
import { UsageCountersRepository } from './usage-counters-repository.ts';
import type { SearchCommit } from '../search-commit.ts';
import { LedgerStatements } from '../ledger-statements.ts';
import { SettingsRepository } from './settings-repository.ts';
import { TokensRepository } from './tokens-repository.ts';
import { WebSessionsRepository } from './web-sessions-repository.ts';
import { WatchesRepository } from './watches-repository.ts';
import { WebhookEndpointsRepository } from './webhook-endpoints-repository.ts';
import { WebhookOutboxRepository } from './webhook-outbox-repository.ts';
// Feeds the service pulls itself (0021).
import { FeedsRepository } from './feeds-repository.ts';
// Batches (issue 26).
import { BatchesRepository } from './batches-repository.ts';

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
  // Billing mail decided once, and the legal pages every instance shares (0016).
  billingNotices: BillingNoticesRepository;
  legalDocuments: LegalDocumentsRepository;
  // The operators' tools (0015): the account listing and the audit log.
  accountDirectory: AccountDirectoryRepository;
  operatorAudit: OperatorAuditRepository;
  // The catalogue and the market's comparables (0018).
  market: MarketRepository;
  // Verifiable reports: the signing keys and the reports' signatures (0020).
  reportSignatures: ReportSignaturesRepository;
  // Lot history (0019): versions, sightings, listing changes.
  lotHistory: LotHistoryRepository;
  // Feeds the service pulls itself (0021).
  feeds: FeedsRepository;
  // Batches of searches run in the background (0022).
  batches: BatchesRepository;
}

export interface RepositoryOptions {
  /** The rooms that take part in storing lots, in order (lots-written.ts; container.ts wires them). */
  lotsWritten?: readonly LotsWrittenHook[];
}

export function createRepositories(db: Db, options: RepositoryOptions = {}): Repositories {
  const ledger = new LedgerStatements(db.kysely);
  const reports = new ReportsRepository(db, ledger);
  return {
    plans: new PlansRepository(db),
    accounts: new AccountsRepository(db),
    subscriptions: new SubscriptionsRepository(db),
    tokens: new TokensRepository(db),
    lots: new LotsRepository(db, options.lotsWritten ? { lotsWritten: options.lotsWritten } : {}),
    reports,
    searches: new SearchesRepository(db, ledger),
    usageCounters: new UsageCountersRepository(db, ledger),
    idempotencyKeys: new IdempotencyKeysRepository(db, ledger),
    // One per database, however many sets of repositories are made on it (dialects/dialect.ts).
    searchCommit: db.dialect.searchCommit(),
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
    billingNotices: new BillingNoticesRepository(db),
    legalDocuments: new LegalDocumentsRepository(db),
    market: new MarketRepository(db),
    reportSignatures: new ReportSignaturesRepository(db),
    // Lot history (0019).
    lotHistory: new LotHistoryRepository(db),
    // Feeds the service pulls itself (0021).
    feeds: new FeedsRepository(db),
    // Batches (0022).
    batches: new BatchesRepository(db, reports),
  };
}
