import type { Account } from '../domain/account.ts';
import type { ApiToken } from '../domain/api-token.ts';
import type { Invoice, InvoiceStatus } from '../domain/invoice.ts';
import type { AccountListing, AccountStatus, AuditAction, AuditEntry } from '../domain/operations.ts';
import type { BillingCycle } from '../domain/principal.ts';
import type { Subscription } from '../domain/subscription.ts';
import type { BillingService, OperatorChangeOutcome } from '../billing/billing-service.ts';
import type { InvoiceService } from '../billing/invoice-service.ts';
import type { Settlement } from '../billing/manual-invoices.ts';
import { PaymentError } from '../billing/payment-provider.ts';
import type { ApiTokenService } from '../accounts/api-tokens.ts';
import type { Usage, UsageService } from '../limits/usage-service.ts';
import type { Repositories } from '../storage/repositories/index.ts';

/** Who did it, as the audit log records it: `token:<operator token name>` or `cli:<os user>`. */
export interface Actor {
  readonly name: string;
}

export const MAX_PAGE = 100;
export const DEFAULT_PAGE = 50;

/** An account as the operators see it: where it stands and this period's use. */
export interface AccountSummary {
  id: string;
  /** The address it has, or had (a deleted account). */
  email: string;
  status: AccountStatus;
  createdAt: string;
  deletedAt: string | null;
  subscription: Subscription | null;
  /** This billing period's use; null without a subscription in force. */
  usage: Usage | null;
}

export interface AccountDetails extends AccountSummary {
  provider: 'operator' | 'manual' | 'stripe' | null;
  paidThrough: string | null;
  cancelAtPeriodEnd: boolean;
  tokens: ApiToken[];
  invoices: Invoice[];
}

export interface Page<T> {
  items: T[];
  /** Pass it back as `cursor` for the next page; null on the last. */
  nextCursor: string | null;
}

/** A refusal the operator can read and act on, or something that does not exist. */
export type Refusal = { kind: 'not-found'; message: string } | { kind: 'refused'; message: string } | { kind: 'invalid'; field: string; message: string };
export type Outcome<T> = ({ kind: 'done' } & T) | Refusal;

export interface AccountFilter {
  email?: string;
  plan?: string;
  status?: AccountStatus;
  limit?: number;
  cursor?: string;
}

export interface InvoiceFilter {
  email?: string;
  status?: InvoiceStatus;
  limit?: number;
  cursor?: string;
}

/** A time-and-id cursor, opaque to the caller: base64url of "createdAt|id". */
function encodeCursor(createdAt: string, id: string): string {
  return Buffer.from(`${createdAt}|${id}`, 'utf8').toString('base64url');
}

function decodeCursor(cursor: string): { createdAt: string; id: string } | null {
  if (cursor.length > 200 || !/^[A-Za-z0-9_-]+$/.test(cursor)) return null;
  const [createdAt, id, ...rest] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  if (rest.length > 0 || !createdAt || !id || Number.isNaN(Date.parse(createdAt))) return null;
  return { createdAt, id };
}

function notFound(idOrEmail: string): Refusal {
  return { kind: 'not-found', message: idOrEmail.includes('@') ? `No account with email ${idOrEmail}.` : `No account ${idOrEmail}.` };
}

const badCursor: Refusal = { kind: 'invalid', field: 'cursor', message: 'cursor is not one this listing gave; start again without it.' };

function pageSize(limit: number | undefined): number {
  return Math.min(Math.max(Math.trunc(limit ?? DEFAULT_PAGE), 1), MAX_PAGE);
}

/**
 * The operators' customer operations, one set for the CLI and the admin API (and the operators'
 * page): list and find accounts, change, extend and end their plans, their tokens and invoices.
 * Every change goes through the billing and token services, as the customer's own would, and is
 * recorded in the audit log once it is done, with who did it.
 */
export class OperatorService {
  constructor(
    private readonly options: {
      repos: Repositories;
      billing: BillingService;
      invoices: InvoiceService;
      usage: UsageService;
      apiTokens: ApiTokenService;
      now?: () => Date;
    },
  ) {}

  private get repos(): Repositories {
    return this.options.repos;
  }

  private now(): Date {
    return this.options.now?.() ?? new Date();
  }

  /** Appends to the audit log (also for edges that change things through other services, such as an import). */
  record(actor: Actor, action: AuditAction, target: string, details: Record<string, unknown>): Promise<AuditEntry> {
    return this.repos.operatorAudit.record({ actor: actor.name, action, target, details }, this.now());
  }

  async auditPage(options: { limit?: number; cursor?: string; target?: string }): Promise<Outcome<{ page: Page<AuditEntry> }>> {
    if (options.cursor !== undefined && !/^aud_[0-9a-z]{20}$/.test(options.cursor)) return badCursor;
    const limit = pageSize(options.limit);
    const items = await this.repos.operatorAudit.page({ limit: limit + 1, ...(options.cursor ? { before: options.cursor } : {}), ...(options.target ? { target: options.target } : {}) });
    const more = items.length > limit;
    const shown = items.slice(0, limit);
    return { kind: 'done', page: { items: shown, nextCursor: more ? shown.at(-1)!.id : null } };
  }

  /** Webhook delivery health for the operators' page: events waiting and the oldest one's age. */
  webhookQueue(): Promise<{ pending: number; oldestPendingAt: string | null }> {
    return this.repos.webhookOutbox.stats();
  }

  // Accounts.

  async listAccounts(filter: AccountFilter): Promise<Outcome<{ page: Page<AccountSummary> }>> {
    const before = filter.cursor === undefined ? undefined : decodeCursor(filter.cursor);
    if (before === null) return badCursor;
    const limit = pageSize(filter.limit);
    const now = this.now();
    const rows = await this.repos.accountDirectory.page(
      {
        limit: limit + 1,
        ...(filter.email !== undefined ? { email: filter.email } : {}),
        ...(filter.plan !== undefined ? { plan: filter.plan } : {}),
        ...(filter.status !== undefined ? { status: filter.status } : {}),
        ...(before ? { before } : {}),
      },
      now,
    );
    const shown = rows.slice(0, limit);
    const items = await Promise.all(shown.map((row) => this.summary(row, now)));
    const last = shown.at(-1);
    return { kind: 'done', page: { items, nextCursor: rows.length > limit && last ? encodeCursor(last.account.createdAt, last.account.id) : null } };
  }

  private async summary(row: AccountListing, now: Date): Promise<AccountSummary> {
    const status: AccountStatus = row.deletedAt !== null ? 'deleted' : row.inForce ? 'active' : row.everSubscribed ? 'lapsed' : 'none';
    return {
      id: row.account.id,
      email: row.deletedEmail ?? row.account.email,
      status,
      createdAt: row.account.createdAt,
      deletedAt: row.deletedAt,
      subscription: row.inForce,
      usage: row.inForce && row.deletedAt === null ? await this.options.usage.forAccount(row.account.id, now) : null,
    };
  }

  /** An account by id (acct_...) or email; a deleted one by id only. */
  private async resolve(idOrEmail: string): Promise<AccountListing | null> {
    const now = this.now();
    const value = idOrEmail.trim();
    if (value.startsWith('acct_')) return (await this.repos.accountDirectory.find(value, now)) ?? null;
    const account = await this.repos.accounts.findByEmail(value);
    return account ? ((await this.repos.accountDirectory.find(account.id, now)) ?? null) : null;
  }

  private async live(idOrEmail: string): Promise<Account | Refusal> {
    const listing = await this.resolve(idOrEmail);
    if (!listing) return notFound(idOrEmail);
    if (listing.deletedAt !== null) return { kind: 'refused', message: `Account ${listing.account.id} was deleted on ${listing.deletedAt}.` };
    return listing.account;
  }

  async showAccount(idOrEmail: string): Promise<Outcome<{ account: AccountDetails }>> {
    const listing = await this.resolve(idOrEmail);
    if (!listing) return notFound(idOrEmail);
    const summary = await this.summary(listing, this.now());
    const billing = summary.subscription ? await this.repos.billing.find(summary.subscription.id) : undefined;
    const [tokens, invoices] = await Promise.all([this.repos.tokens.listForAccount(listing.account.id), this.repos.invoices.listForAccount(listing.account.id, 20)]);
    return {
      kind: 'done',
      account: {
        ...summary,
        provider: summary.subscription ? (billing?.provider ?? 'operator') : null,
        paidThrough: billing?.paidThrough ?? null,
        cancelAtPeriodEnd: billing?.cancelAtPeriodEnd ?? false,
        tokens,
        invoices,
      },
    };
  }

  /** `accounts create`: a new account with a subscription arranged with the operator. */
  async createAccount(actor: Actor, input: { email: string; planCode: string; billing: BillingCycle }) {
    const outcome = await this.options.billing.arrangeNewAccount(input, this.now());
    if (outcome.kind === 'created') {
      await this.record(actor, 'account.create', outcome.account.id, { email: outcome.account.email, plan: outcome.plan.code, billing: input.billing, subscription: outcome.subscription.id });
    }
    return outcome;
  }

  // Subscriptions.

  async changePlan(actor: Actor, idOrEmail: string, planCode: string, billing?: BillingCycle): Promise<Outcome<{ change: Exclude<OperatorChangeOutcome, { kind: 'unknown-plan' }> }>> {
    const account = await this.live(idOrEmail);
    if ('kind' in account) return account;
    const change = await this.refusing(() => this.options.billing.operatorChange(account, planCode, billing, this.now()));
    if ('message' in change) return change;
    if (change.kind === 'unknown-plan') return { kind: 'invalid', field: 'plan', message: `No plan with code "${planCode}". Known plans: ${change.knownCodes.join(', ')}.` };
    await this.record(actor, 'subscription.change', account.id, {
      email: account.email,
      subscription: change.subscription.id,
      ...(change.kind === 'changed' ? { from: change.from.code, provider: change.provider } : { started: true }),
      plan: change.plan.code,
      billing: change.subscription.billing,
      ...(change.kind === 'changed' && change.invoice ? { invoice: change.invoice.id, amount_cents: change.invoice.amountCents } : {}),
    });
    return { kind: 'done', change };
  }

  async extend(actor: Actor, idOrEmail: string, until: Date): Promise<Outcome<{ subscription: Subscription; previousEnd: string }>> {
    const account = await this.live(idOrEmail);
    if ('kind' in account) return account;
    if (until.getTime() <= this.now().getTime()) return { kind: 'invalid', field: 'until', message: 'The new end must be in the future.' };
    const result = await this.refusing(() => this.options.billing.operatorExtend(account, until, this.now()));
    if ('message' in result) return result;
    await this.record(actor, 'subscription.extend', account.id, { email: account.email, subscription: result.subscription.id, from: result.previousEnd, until: result.subscription.endsAt });
    return { kind: 'done', ...result };
  }

  /** Ends the plan now, through the provider that bills it (`subscriptions end`, formerly `cancel`). */
  async end(actor: Actor, idOrEmail: string): Promise<Outcome<{ ended: Subscription | null; count: number; at: Date }>> {
    const account = await this.live(idOrEmail);
    if ('kind' in account) return account;
    const at = this.now();
    const result = await this.refusing(() => this.options.billing.endNow(account, at));
    if ('message' in result) return result;
    if (result.count === 0) return { kind: 'refused', message: `${account.email} has no subscription to end.` };
    await this.record(actor, 'subscription.end', account.id, { email: account.email, subscription: result.ended?.id ?? null, ended: result.count });
    return { kind: 'done', ...result, at };
  }

  // Tokens.

  async listTokens(idOrEmail: string): Promise<Outcome<{ account: Account; tokens: ApiToken[] }>> {
    const listing = await this.resolve(idOrEmail);
    if (!listing) return notFound(idOrEmail);
    return { kind: 'done', account: listing.account, tokens: await this.options.apiTokens.list(listing.account.id) };
  }

  async issueToken(actor: Actor, idOrEmail: string, name: string, kind: 'live' | 'test'): Promise<Outcome<{ account: Account; token: ApiToken; secret: string }>> {
    const account = await this.live(idOrEmail);
    if ('kind' in account) return account;
    const { token, secret } = await this.options.apiTokens.issue(account.id, name, this.now(), kind);
    await this.record(actor, 'token.create', token.id, { account: account.id, email: account.email, name, kind, hint: token.displayPrefix });
    return { kind: 'done', account, token, secret };
  }

  /** Revokes a token by its id (tok_...); the account, when given, must be its owner. */
  async revokeToken(actor: Actor, tokenId: string, accountId?: string): Promise<Outcome<{ token: ApiToken }>> {
    const token = await this.repos.tokens.findById(tokenId);
    if (!token || (accountId !== undefined && token.accountId !== accountId)) return { kind: 'not-found', message: `No token ${tokenId}.` };
    if (!(await this.options.apiTokens.revoke(token.accountId, token.id, this.now()))) return { kind: 'refused', message: `Token ${tokenId} is already revoked.` };
    await this.record(actor, 'token.revoke', token.id, { account: token.accountId, name: token.name, hint: token.displayPrefix });
    return { kind: 'done', token: (await this.repos.tokens.findById(token.id)) ?? token };
  }

  /** Revokes a token given by its secret (`tokens revoke --token`); the secret is never recorded. */
  async revokeTokenBySecret(actor: Actor, secret: string): Promise<boolean> {
    const token = await this.repos.tokens.findBySecret(secret);
    if (!token || !(await this.options.apiTokens.revokeBySecret(secret, this.now()))) return false;
    await this.record(actor, 'token.revoke', token.id, { account: token.accountId, name: token.name, hint: token.displayPrefix });
    return true;
  }

  // Invoices.

  async listInvoices(filter: InvoiceFilter): Promise<Outcome<{ page: Page<Invoice & { email: string }> }>> {
    const before = filter.cursor === undefined ? undefined : decodeCursor(filter.cursor);
    if (before === null) return badCursor;
    const limit = pageSize(filter.limit);
    const rows = await this.options.invoices.list({
      limit: limit + 1,
      ...(filter.email !== undefined ? { email: filter.email } : {}),
      ...(filter.status !== undefined ? { status: filter.status } : {}),
      ...(before ? { before } : {}),
    });
    const items = rows.slice(0, limit);
    const last = items.at(-1);
    return { kind: 'done', page: { items, nextCursor: rows.length > limit && last ? encodeCursor(last.createdAt, last.id) : null } };
  }

  async payInvoice(actor: Actor, idOrReference: string): Promise<Outcome<{ settlement: Settlement }>> {
    const settlement = await this.refusing(() => this.options.invoices.pay(idOrReference, this.now()));
    if ('message' in settlement) return settlement;
    const { invoice } = settlement;
    await this.record(actor, 'invoice.pay', invoice.id, { reference: invoice.reference, account: invoice.accountId, amount_cents: invoice.amountCents, kind: invoice.kind, plan: invoice.planCode });
    return { kind: 'done', settlement };
  }

  async voidInvoice(actor: Actor, idOrReference: string): Promise<Outcome<{ invoice: Invoice }>> {
    const invoice = await this.refusing(() => this.options.invoices.void(idOrReference, this.now()));
    if ('message' in invoice) return invoice;
    await this.record(actor, 'invoice.void', invoice.id, { reference: invoice.reference, account: invoice.accountId, amount_cents: invoice.amountCents });
    return { kind: 'done', invoice };
  }

  async setBankDetails(actor: Actor, text: string | null): Promise<void> {
    await this.options.invoices.setBankDetails(text, this.now());
    await this.record(actor, 'invoice.payee', 'bank-details', { set: text !== null });
  }

  /** The billing rules' refusals (PaymentError) as outcomes; "No invoice ..." as not found. */
  private async refusing<T>(work: () => Promise<T>): Promise<T | Refusal> {
    try {
      return await work();
    } catch (error) {
      if (!(error instanceof PaymentError)) throw error;
      return error.message.startsWith('No invoice with') ? { kind: 'not-found', message: error.message } : { kind: 'refused', message: error.message };
    }
  }
}
