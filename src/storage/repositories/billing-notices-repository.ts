import { sql } from 'kysely';
import type { Invoice } from '../../domain/invoice.ts';
import { isReportLanguage, type ReportLanguage } from '../../domain/report-language.ts';
import type { Db } from '../database.ts';
import { toInvoice } from './invoices-repository.ts';

/** What a billing notice is about; with its subject, the notice's once-only key. */
export type BillingNoticeKind = 'invoice_issued' | 'invoice_paid' | 'quota_80' | 'quota_100' | 'plan_ending' | 'plan_ended';

/** The customer a notice is for: null address when the account is deleted (nothing is sent then). */
export interface NoticeAccount {
  id: string;
  email: string;
  language: ReportLanguage | null;
  deleted: boolean;
}

export interface InvoiceNoticeCandidate {
  invoice: Invoice;
  account: NoticeAccount;
  planName: string;
}

export interface QuotaNoticeCandidate {
  account: NoticeAccount;
  subscriptionStartedAt: string;
  periodStart: string;
  used: number;
  quota: number;
  planName: string;
}

export interface PlanEndCandidate {
  account: NoticeAccount;
  subscriptionId: string;
  endsAt: string;
  planName: string;
  /** Billed by manual invoices: the customer renews it from the billing page. */
  renewable: boolean;
}

/** Most candidates one sweep looks at per kind; the next sweep takes the rest. */
const BATCH = 200;

function account(row: { account_id: string; email: string; default_language: string | null; deleted_at: string | null }): NoticeAccount {
  return {
    id: row.account_id,
    email: row.email,
    language: isReportLanguage(row.default_language) ? row.default_language : null,
    deleted: row.deleted_at !== null,
  };
}

/**
 * Billing mail decided once: a notice row per (kind, subject), whose primary key lets one
 * transaction of one instance win it, and the queries that find what has no notice yet. Each query
 * looks back only as far as `since`, so a sweep stays small however long the history.
 */
export class BillingNoticesRepository {
  constructor(private readonly db: Db) {}

  /** True when this call took the notice (and its caller sends its mail); false when it was taken before. */
  async claim(kind: BillingNoticeKind, subject: string, accountId: string, now: Date): Promise<boolean> {
    const row = await this.db.kysely
      .insertInto('billing_notices')
      .values({ kind, subject, account_id: accountId, created_at: now.toISOString() })
      .onConflict((oc) => oc.columns(['kind', 'subject']).doNothing())
      .returning('kind')
      .executeTakeFirst();
    return row !== undefined;
  }

  async taken(kind: BillingNoticeKind, subject: string): Promise<boolean> {
    const row = await this.db.kysely.selectFrom('billing_notices').select('kind').where('kind', '=', kind).where('subject', '=', subject).executeTakeFirst();
    return row !== undefined;
  }

  private invoicesWithout(kind: 'invoice_issued' | 'invoice_paid') {
    return this.db.kysely
      .selectFrom('invoices as i')
      .innerJoin('accounts as a', 'a.id', 'i.account_id')
      .leftJoin('plans as p', 'p.code', 'i.plan_code')
      .selectAll('i')
      .select(['a.email', 'a.default_language', 'a.deleted_at', 'p.name as plan_name'])
      .where((eb) =>
        eb.not(eb.exists(eb.selectFrom('billing_notices as n').select('n.kind').where('n.kind', '=', kind).whereRef('n.subject', '=', 'i.id'))),
      );
  }

  /** Invoices issued since `since` (open or already paid) that have not been announced. */
  async invoicesIssued(since: Date): Promise<InvoiceNoticeCandidate[]> {
    const rows = await this.invoicesWithout('invoice_issued')
      .where('i.status', 'in', ['open', 'paid'])
      .where('i.created_at', '>=', since.toISOString())
      .orderBy('i.created_at')
      .limit(BATCH)
      .execute();
    return rows.map((row) => ({ invoice: toInvoice(row), account: account(row), planName: row.plan_name ?? row.plan_code }));
  }

  /** Invoices paid since `since` whose payment has not been acknowledged. */
  async invoicesPaid(since: Date): Promise<InvoiceNoticeCandidate[]> {
    const rows = await this.invoicesWithout('invoice_paid')
      .where('i.status', '=', 'paid')
      .where('i.paid_at', '>=', since.toISOString())
      .orderBy('i.paid_at')
      .limit(BATCH)
      .execute();
    return rows.map((row) => ({ invoice: toInvoice(row), account: account(row), planName: row.plan_name ?? row.plan_code }));
  }

  /**
   * Counters of recent periods at 80% of their quota or more, of subscriptions in force at `now`,
   * that lack the notice of the threshold they reached. The caller checks that the counter's period
   * is the subscription's current one (its start is computed, not stored).
   */
  async quotaReached(now: Date, since: Date): Promise<QuotaNoticeCandidate[]> {
    const at = now.toISOString();
    const subject = sql<string>`u.account_id || '@' || u.period_start`;
    const rows = await this.db.kysely
      .selectFrom('usage_counters as u')
      .innerJoin('subscriptions as s', 's.account_id', 'u.account_id')
      .innerJoin('plans as p', 'p.code', 's.plan_code')
      .innerJoin('accounts as a', 'a.id', 'u.account_id')
      .select(['u.account_id', 'u.period_start', 'u.used', 's.started_at', 'p.monthly_quota', 'p.name as plan_name', 'a.email', 'a.default_language', 'a.deleted_at'])
      .where('u.period_start', '>=', since.toISOString())
      .where('s.status', '=', 'active')
      .where('s.started_at', '<=', at)
      .where((eb) => eb.or([eb('s.ends_at', 'is', null), eb('s.ends_at', '>', at)]))
      .where('p.monthly_quota', '>', 0)
      .where((eb) =>
        eb.or([
          eb.and([
            eb(sql`u.used * 5`, '>=', sql`p.monthly_quota * 4`),
            eb.not(eb.exists(eb.selectFrom('billing_notices as n').select('n.kind').where('n.kind', '=', 'quota_80').where('n.subject', '=', subject))),
          ]),
          eb.and([
            eb('u.used', '>=', eb.ref('p.monthly_quota')),
            eb.not(eb.exists(eb.selectFrom('billing_notices as n').select('n.kind').where('n.kind', '=', 'quota_100').where('n.subject', '=', subject))),
          ]),
        ]),
      )
      .limit(BATCH)
      .execute();
    return rows.map((row) => ({
      account: account(row),
      subscriptionStartedAt: row.started_at,
      periodStart: row.period_start,
      used: Number(row.used),
      quota: Number(row.monthly_quota),
      planName: row.plan_name,
    }));
  }

  private subscriptionsEnding() {
    return this.db.kysely
      .selectFrom('subscriptions as s')
      .innerJoin('accounts as a', 'a.id', 's.account_id')
      .leftJoin('plans as p', 'p.code', 's.plan_code')
      .leftJoin('subscription_billing as b', 'b.subscription_id', 's.id')
      .select(['s.id', 's.account_id', 's.ends_at', 's.plan_code', 'p.name as plan_name', 'b.provider', 'b.cancel_at_period_end', 'a.email', 'a.default_language', 'a.deleted_at']);
  }

  private toPlanEnd(row: {
    id: string;
    account_id: string;
    ends_at: string | null;
    plan_code: string;
    plan_name: string | null;
    provider: string | null;
    cancel_at_period_end: number | null;
    email: string;
    default_language: string | null;
    deleted_at: string | null;
  }): PlanEndCandidate {
    return {
      account: account(row),
      subscriptionId: row.id,
      endsAt: row.ends_at!,
      planName: row.plan_name ?? row.plan_code,
      renewable: row.provider === 'manual' && Number(row.cancel_at_period_end ?? 0) === 0,
    };
  }

  /**
   * Subscriptions in force whose end falls between `now` and `until` and will not renew by itself
   * (a Stripe subscription renews unless cancelled), without a notice for that end. The subject
   * holds the end: a plan extended and then ending again is announced again.
   */
  async plansEnding(now: Date, until: Date): Promise<PlanEndCandidate[]> {
    const rows = await this.subscriptionsEnding()
      .where('s.status', '=', 'active')
      .where('s.ends_at', '>', now.toISOString())
      .where('s.ends_at', '<=', until.toISOString())
      .where((eb) => eb.or([eb('b.provider', 'is', null), eb('b.provider', '!=', 'stripe'), eb('b.cancel_at_period_end', '=', 1)]))
      .where((eb) =>
        eb.not(
          eb.exists(
            eb
              .selectFrom('billing_notices as n')
              .select('n.kind')
              .where('n.kind', '=', 'plan_ending')
              .where('n.subject', '=', sql<string>`s.id || '@' || s.ends_at`),
          ),
        ),
      )
      .orderBy('s.ends_at')
      .limit(BATCH)
      .execute();
    return rows.map((row) => this.toPlanEnd(row));
  }

  /** Subscriptions whose end fell between `since` and `now`, without a notice that they ended. */
  async plansEnded(now: Date, since: Date): Promise<PlanEndCandidate[]> {
    const rows = await this.subscriptionsEnding()
      .where('s.ends_at', '<=', now.toISOString())
      .where('s.ends_at', '>', since.toISOString())
      .where((eb) =>
        eb.not(eb.exists(eb.selectFrom('billing_notices as n').select('n.kind').where('n.kind', '=', 'plan_ended').whereRef('n.subject', '=', 's.id'))),
      )
      .orderBy('s.ends_at')
      .limit(BATCH)
      .execute();
    return rows.map((row) => this.toPlanEnd(row));
  }
}
