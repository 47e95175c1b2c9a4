import type { Db } from '../database.ts';
import type { SubscriptionBillingRow } from '../schema.ts';
import type { BillingProvider, SubscriptionBilling } from '../../domain/subscription.ts';

function toSubscriptionBilling(row: SubscriptionBillingRow): SubscriptionBilling {
  return {
    subscriptionId: row.subscription_id,
    provider: row.provider,
    externalId: row.external_id,
    cancelAtPeriodEnd: row.cancel_at_period_end === 1,
    scheduledPlanCode: row.scheduled_plan_code,
    paidThrough: row.paid_through,
    updatedAt: row.updated_at,
  };
}

/**
 * What the payment side knows about subscriptions: which provider bills each one (and its id
 * there), a cancellation at the period's end, a plan change waiting for the renewal; the Stripe
 * customer of an account; and the webhook events already handled.
 */
export class BillingRepository {
  constructor(private readonly db: Db) {}

  async find(subscriptionId: string): Promise<SubscriptionBilling | undefined> {
    const row = await this.db.kysely.selectFrom('subscription_billing').selectAll().where('subscription_id', '=', subscriptionId).executeTakeFirst();
    return row && toSubscriptionBilling(row);
  }

  async findByExternalId(externalId: string): Promise<SubscriptionBilling | undefined> {
    const row = await this.db.kysely.selectFrom('subscription_billing').selectAll().where('external_id', '=', externalId).executeTakeFirst();
    return row && toSubscriptionBilling(row);
  }

  async create(
    input: { subscriptionId: string; provider: BillingProvider; externalId?: string | null; paidThrough?: Date | null },
    now = new Date(),
  ): Promise<SubscriptionBilling> {
    const row: SubscriptionBillingRow = {
      subscription_id: input.subscriptionId,
      provider: input.provider,
      external_id: input.externalId ?? null,
      cancel_at_period_end: 0,
      scheduled_plan_code: null,
      paid_through: input.paidThrough ? input.paidThrough.toISOString() : null,
      updated_at: now.toISOString(),
    };
    await this.db.kysely.insertInto('subscription_billing').values(row).execute();
    return toSubscriptionBilling(row);
  }

  /** The row for a subscription, made as `provider` when there is none (operator subscriptions). */
  async ensure(subscriptionId: string, provider: BillingProvider, now = new Date()): Promise<SubscriptionBilling> {
    await this.db.kysely
      .insertInto('subscription_billing')
      .values({
        subscription_id: subscriptionId,
        provider,
        external_id: null,
        cancel_at_period_end: 0,
        scheduled_plan_code: null,
        paid_through: null,
        updated_at: now.toISOString(),
      })
      .onConflict((oc) => oc.column('subscription_id').doNothing())
      .execute();
    return (await this.find(subscriptionId))!;
  }

  async setCancelAtPeriodEnd(subscriptionId: string, cancel: boolean, now = new Date()): Promise<void> {
    await this.db.kysely
      .updateTable('subscription_billing')
      .set({ cancel_at_period_end: cancel ? 1 : 0, updated_at: now.toISOString() })
      .where('subscription_id', '=', subscriptionId)
      .execute();
  }

  async setScheduledPlan(subscriptionId: string, planCode: string | null, now = new Date()): Promise<void> {
    await this.db.kysely
      .updateTable('subscription_billing')
      .set({ scheduled_plan_code: planCode, updated_at: now.toISOString() })
      .where('subscription_id', '=', subscriptionId)
      .execute();
  }

  async setPaidThrough(subscriptionId: string, paidThrough: Date, now = new Date()): Promise<void> {
    await this.db.kysely
      .updateTable('subscription_billing')
      .set({ paid_through: paidThrough.toISOString(), updated_at: now.toISOString() })
      .where('subscription_id', '=', subscriptionId)
      .execute();
  }

  async findStripeCustomer(accountId: string): Promise<string | undefined> {
    const row = await this.db.kysely.selectFrom('stripe_customers').select('customer_id').where('account_id', '=', accountId).executeTakeFirst();
    return row?.customer_id;
  }

  /** Remembers the account's Stripe customer; the first one recorded stays. */
  async saveStripeCustomer(accountId: string, customerId: string, now = new Date()): Promise<void> {
    await this.db.kysely
      .insertInto('stripe_customers')
      .values({ account_id: accountId, customer_id: customerId, created_at: now.toISOString() })
      .onConflict((oc) => oc.doNothing())
      .execute();
  }

  /**
   * Takes a Stripe state event (created at `at`) as the newest for its Stripe subscription, unless
   * a newer one, or the deletion, was applied already: then it answers false and changes nothing.
   * One conditional upsert, so that two instances applying events of the same subscription at
   * once are ordered by the database (PostgreSQL re-checks the condition after the other commits).
   */
  async advanceStripeEvent(stripeSubscriptionId: string, at: Date, now = new Date()): Promise<boolean> {
    const iso = at.toISOString();
    const row = await this.db.kysely
      .insertInto('stripe_subscription_events')
      .values({ stripe_subscription_id: stripeSubscriptionId, last_event_at: iso, deleted_at: null, updated_at: now.toISOString() })
      .onConflict((oc) =>
        oc
          .column('stripe_subscription_id')
          .doUpdateSet({ last_event_at: iso, updated_at: now.toISOString() })
          .where((eb) => eb.and([eb('stripe_subscription_events.deleted_at', 'is', null), eb('stripe_subscription_events.last_event_at', '<=', iso)])),
      )
      .returning('stripe_subscription_id')
      .executeTakeFirst();
    return row !== undefined;
  }

  /**
   * Records the deletion of a Stripe subscription, which is final whatever came before it; false
   * when it was recorded already. Kept even for a subscription not (yet) ours: its first
   * `invoice.paid` may arrive after it.
   */
  async recordStripeDeletion(stripeSubscriptionId: string, at: Date, deletedAt: Date, now = new Date()): Promise<boolean> {
    const values = { last_event_at: at.toISOString(), deleted_at: deletedAt.toISOString(), updated_at: now.toISOString() };
    const row = await this.db.kysely
      .insertInto('stripe_subscription_events')
      .values({ stripe_subscription_id: stripeSubscriptionId, ...values })
      .onConflict((oc) => oc.column('stripe_subscription_id').doUpdateSet(values).where('stripe_subscription_events.deleted_at', 'is', null))
      .returning('stripe_subscription_id')
      .executeTakeFirst();
    return row !== undefined;
  }

  /** When the Stripe subscription was deleted, if a deletion was received. */
  async findStripeDeletion(stripeSubscriptionId: string): Promise<Date | undefined> {
    const row = await this.db.kysely
      .selectFrom('stripe_subscription_events')
      .select('deleted_at')
      .where('stripe_subscription_id', '=', stripeSubscriptionId)
      .executeTakeFirst();
    return row?.deleted_at ? new Date(row.deleted_at) : undefined;
  }

  /**
   * Records a webhook event as handled. Run inside the transaction that applies its effects: a
   * redelivery, or the same event handled at once by another instance, then fails on the primary
   * key and rolls back instead of applying twice.
   */
  async recordEvent(id: string, provider: string, type: string, now = new Date()): Promise<void> {
    await this.db.kysely.insertInto('webhook_events').values({ id, provider, type, received_at: now.toISOString() }).execute();
  }

  async hasEvent(id: string): Promise<boolean> {
    return (await this.db.kysely.selectFrom('webhook_events').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
  }
}
