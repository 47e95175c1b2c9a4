import type { Kysely } from 'kysely';

/**
 * Stripe sends events in no guaranteed order. Per Stripe subscription, the creation time of the
 * last state event applied (`customer.subscription.updated`/`deleted`), so that an older one
 * arriving later is recognised, and the time it was deleted, which may come before the first
 * `invoice.paid` (so the row cannot hang off `subscription_billing`). Same conventions as 0001.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('stripe_subscription_events')
    .addColumn('stripe_subscription_id', 'text', (c) => c.primaryKey())
    .addColumn('last_event_at', 'text', (c) => c.notNull())
    .addColumn('deleted_at', 'text')
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('stripe_subscription_events').execute();
}
