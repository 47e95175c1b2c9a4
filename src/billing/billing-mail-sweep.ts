import type { FastifyBaseLogger } from 'fastify';
import type { MailQueue } from '../accounts/mail/mail-queue.ts';
import type { MailToQueue } from '../accounts/mail/messages.ts';
import { billingPeriodAt } from '../limits/billing-period.ts';
import type { Db } from '../storage/database.ts';
import type { BillingNoticeKind, NoticeAccount } from '../storage/repositories/billing-notices-repository.ts';
import type { Repositories } from '../storage/repositories/index.ts';
import { inTransaction } from '../storage/transaction.ts';
import {
  invoiceIssuedMail,
  operatorInvoiceMail,
  operatorPaymentMail,
  planEndMail,
  quotaMail,
  receiptMail,
  type BillingLinks,
  type MailAccount,
} from './billing-mail.ts';

const DAY_MS = 24 * 60 * 60 * 1000;
/** How long before a plan's end its customer is told. */
export const PLAN_ENDING_NOTICE_DAYS = 7;
/** How far back a sweep looks for what it has not announced: an instance down for a weekend still sends it. */
const LOOKBACK_MS = 3 * DAY_MS;
/** A billing period is at most 31 days: counters older than this are of past periods. */
const COUNTER_LOOKBACK_MS = 32 * DAY_MS;
export const DEFAULT_SWEEP_INTERVAL_MS = 60_000;

/** Notices taken by one sweep (each with its mail, or silently when there was nothing to tell). */
export interface SweepResult {
  invoices: number;
  receipts: number;
  quota: number;
  ending: number;
  ended: number;
}

export interface BillingMailSweepOptions {
  db: Db;
  repos: Repositories;
  mail: MailQueue;
  links: BillingLinks;
  operatorEmail: string | null;
  log: FastifyBaseLogger;
  now?: () => Date;
  intervalMs?: number;
}

const mailAccount = (account: NoticeAccount): MailAccount => ({ id: account.id, email: account.email, language: account.language });

/**
 * Billing mail, decided by a periodic sweep rather than where invoices are issued or searches
 * counted: an invoice may be issued or paid by the web, the CLI, Stripe's webhook or an operator on
 * another instance, and the search commit is the hot path, which must not carry a mail check. Each
 * sweep finds what has no notice yet (an invoice issued or paid, a quota at 80% or 100% in the
 * current period, a plan ending within 7 days or ended) and, per notice, in one transaction takes
 * the notice's row (its primary key: exactly once, whichever instance sweeps) and queues the mail.
 * The delivery worker sends it. Every instance may sweep; `vinhistory serve` starts it.
 */
export class BillingMailSweep {
  private readonly now: () => Date;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;

  constructor(private readonly options: BillingMailSweepOptions) {
    this.now = options.now ?? (() => new Date());
  }

  start(): void {
    if (this.timer) return;
    const tick = () => {
      this.running = this.sweep()
        .then((result) => {
          if (Object.values(result).some((n) => n > 0)) this.options.log.info({ notices: result }, 'billing mail queued');
        })
        .catch((error) => this.options.log.warn({ err: error }, 'billing mail sweep failed; it runs again at the next interval'))
        .finally(() => {
          this.running = null;
          if (this.timer) this.timer = setTimeout(tick, this.options.intervalMs ?? DEFAULT_SWEEP_INTERVAL_MS).unref();
        });
    };
    this.timer = setTimeout(tick, 0).unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  /** One pass over every kind of notice; what it took. */
  async sweep(now = this.now()): Promise<SweepResult> {
    const result: SweepResult = { invoices: 0, receipts: 0, quota: 0, ending: 0, ended: 0 };
    const { repos, links, operatorEmail } = this.options;
    const since = new Date(now.getTime() - LOOKBACK_MS);

    for (const { invoice, account, planName } of await repos.billingNotices.invoicesIssued(since)) {
      // An invoice paid before any sweep saw it (a card charged at once) is told by its receipt alone.
      const mails =
        account.deleted || invoice.status !== 'open'
          ? []
          : [invoiceIssuedMail(mailAccount(account), invoice, planName, links), ...(operatorEmail ? [operatorInvoiceMail(operatorEmail, mailAccount(account), invoice, planName)] : [])];
      if (await this.notify('invoice_issued', invoice.id, account.id, now, mails)) result.invoices += 1;
    }

    for (const { invoice, account, planName } of await repos.billingNotices.invoicesPaid(since)) {
      const mails = [
        ...(account.deleted ? [] : [receiptMail(mailAccount(account), invoice, planName, links)]),
        ...(operatorEmail ? [operatorPaymentMail(operatorEmail, mailAccount(account), invoice, planName)] : []),
      ];
      if (await this.notify('invoice_paid', invoice.id, account.id, now, mails)) result.receipts += 1;
    }

    for (const candidate of await repos.billingNotices.quotaReached(now, new Date(now.getTime() - COUNTER_LOOKBACK_MS))) {
      const { account } = candidate;
      const subject = `${account.id}@${candidate.periodStart}`;
      const period = billingPeriodAt(new Date(candidate.subscriptionStartedAt), now);
      const current = period.start.toISOString() === candidate.periodStart && !account.deleted;
      const full = candidate.used >= candidate.quota;
      // A jump past both thresholds between two sweeps is told once, as the 100% warning.
      if (full && (await this.notify('quota_80', subject, account.id, now, []))) result.quota += 1;
      const threshold = full ? 100 : 80;
      const mails = current
        ? [quotaMail(mailAccount(account), { threshold, used: candidate.used, quota: candidate.quota, planName: candidate.planName, periodEnd: period.end }, links)]
        : [];
      if (await this.notify(full ? 'quota_100' : 'quota_80', subject, account.id, now, mails)) result.quota += 1;
    }

    for (const candidate of await repos.billingNotices.plansEnding(now, new Date(now.getTime() + PLAN_ENDING_NOTICE_DAYS * DAY_MS))) {
      const { account } = candidate;
      const mails = account.deleted
        ? []
        : [planEndMail(mailAccount(account), { when: 'ending', planName: candidate.planName, endsAt: new Date(candidate.endsAt), renewable: candidate.renewable }, links)];
      if (await this.notify('plan_ending', `${candidate.subscriptionId}@${candidate.endsAt}`, account.id, now, mails)) result.ending += 1;
    }

    for (const candidate of await repos.billingNotices.plansEnded(now, since)) {
      const { account } = candidate;
      // Another plan took over (a lapsed term renewed, a new plan chosen): nothing has ended for the customer.
      const succeeded = account.deleted || (await repos.subscriptions.findActive(account.id, now)) !== undefined;
      const mails = succeeded
        ? []
        : [planEndMail(mailAccount(account), { when: 'ended', planName: candidate.planName, endsAt: new Date(candidate.endsAt), renewable: candidate.renewable }, links)];
      if (await this.notify('plan_ended', candidate.subscriptionId, account.id, now, mails)) result.ended += 1;
    }
    return result;
  }

  /** Takes the notice and queues its mail in one transaction; false when another sweep took it first. */
  private async notify(kind: BillingNoticeKind, subject: string, accountId: string, now: Date, mails: MailToQueue[]): Promise<boolean> {
    const taken = await inTransaction(this.options.db, async (repos) => {
      if (!(await repos.billingNotices.claim(kind, subject, accountId, now))) return false;
      for (const mail of mails) await repos.mailQueue.enqueue(mail, now);
      return true;
    });
    if (taken && mails.length > 0) this.options.mail.queuedElsewhere();
    return taken;
  }
}
