import type { Db } from '../database.ts';
import type { WebhookEndpointRow } from '../schema.ts';
import type { EndpointForDelivery, WebhookEndpoint } from '../../domain/webhook.ts';

function toEndpoint(row: WebhookEndpointRow): WebhookEndpoint {
  return {
    accountId: row.account_id,
    url: row.url,
    secretHint: row.secret_hint,
    previousSecretUntil: row.previous_secret_until,
    enabled: row.enabled === 1,
    failingSince: row.failing_since,
    disabledAt: row.disabled_at,
    disabledReason: row.disabled_reason,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** A new secret, sealed: what the repository stores of it. */
export interface SealedSecret {
  box: string;
  hint: string;
}

export class WebhookEndpointsRepository {
  constructor(private readonly db: Db) {}

  async find(accountId: string): Promise<WebhookEndpoint | undefined> {
    const row = await this.db.kysely.selectFrom('webhook_endpoints').selectAll().where('account_id', '=', accountId).executeTakeFirst();
    return row && toEndpoint(row);
  }

  async findForDelivery(accountId: string): Promise<EndpointForDelivery | undefined> {
    const row = await this.db.kysely.selectFrom('webhook_endpoints').selectAll().where('account_id', '=', accountId).executeTakeFirst();
    if (!row) return undefined;
    return {
      url: row.url,
      enabled: row.enabled === 1,
      secretBox: row.secret_box,
      previousSecretBox: row.previous_secret_box,
      previousSecretUntil: row.previous_secret_until,
      failingSince: row.failing_since,
    };
  }

  /** The account's first endpoint; false when it has one already (use update). */
  async create(accountId: string, url: string, secret: SealedSecret, now = new Date()): Promise<boolean> {
    const at = now.toISOString();
    try {
      await this.db.kysely
        .insertInto('webhook_endpoints')
        .values({
          account_id: accountId,
          url,
          secret_box: secret.box,
          secret_hint: secret.hint,
          previous_secret_box: null,
          previous_secret_until: null,
          enabled: 1,
          failing_since: null,
          disabled_at: null,
          disabled_reason: null,
          created_at: at,
          updated_at: at,
        })
        .execute();
      return true;
    } catch (error) {
      if (this.db.isUniqueViolation(error)) return false;
      throw error;
    }
  }

  /**
   * A new URL (or the same one): the endpoint is enabled again and its failure streak forgotten.
   * With a new secret, the current one becomes the previous, signing too until `previousUntil`.
   */
  async update(accountId: string, url: string, rotation: { secret: SealedSecret; previousUntil: Date } | null, now = new Date()): Promise<boolean> {
    const at = now.toISOString();
    const result = await this.db.kysely
      .updateTable('webhook_endpoints')
      .set((eb) => ({
        url,
        enabled: 1,
        failing_since: null,
        disabled_at: null,
        disabled_reason: null,
        updated_at: at,
        ...(rotation
          ? {
              previous_secret_box: eb.ref('secret_box'),
              previous_secret_until: rotation.previousUntil.toISOString(),
              secret_box: rotation.secret.box,
              secret_hint: rotation.secret.hint,
            }
          : {}),
      }))
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** A 2xx: the endpoint works, whatever failed before. */
  async recordSuccess(accountId: string): Promise<void> {
    await this.db.kysely.updateTable('webhook_endpoints').set({ failing_since: null }).where('account_id', '=', accountId).where('failing_since', 'is not', null).execute();
  }

  /** A failed attempt: starts the failure streak if none is running. Returns when the streak started. */
  async recordFailure(accountId: string, now = new Date()): Promise<string | null> {
    await this.db.kysely
      .updateTable('webhook_endpoints')
      .set({ failing_since: now.toISOString() })
      .where('account_id', '=', accountId)
      .where('failing_since', 'is', null)
      .execute();
    const row = await this.db.kysely.selectFrom('webhook_endpoints').select('failing_since').where('account_id', '=', accountId).executeTakeFirst();
    return row?.failing_since ?? null;
  }

  /**
   * Disables an enabled endpoint and gives up its pending events, in one transaction. True for the
   * one caller that disabled it (who tells the customer), false when it was already disabled.
   */
  async disable(accountId: string, reason: string, now = new Date()): Promise<boolean> {
    const at = now.toISOString();
    return this.db.kysely.transaction().execute(async (trx) => {
      const result = await trx
        .updateTable('webhook_endpoints')
        .set({ enabled: 0, disabled_at: at, disabled_reason: reason, updated_at: at })
        .where('account_id', '=', accountId)
        .where('enabled', '=', 1)
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) === 0) return false;
      await trx
        .updateTable('webhook_outbox')
        .set({ status: 'failed', finished_at: at, lease_owner: null, lease_until: null })
        .where('account_id', '=', accountId)
        .where('status', '=', 'pending')
        .execute();
      return true;
    });
  }
}
