import { batchJson, type Batch } from '../domain/batch.ts';
import { newId } from '../domain/ids.ts';
import type { BatchEventBody } from '../domain/webhook.ts';
import type { Repositories } from '../storage/repositories/index.ts';
import { giveUpAtFor } from './retry-schedule.ts';

/**
 * The webhooks' part in a batch's end (docs/webhooks.md): a `batch.completed` event for the
 * batch's account when it has an enabled endpoint, written in the transaction that marks the batch
 * done (`tx` is bound to it), so that it is queued once, whichever instance finished the batch.
 * Delivered, signed and retried like a lot event.
 */
export async function queueBatchCompleted(tx: Pick<Repositories, 'webhookEndpoints' | 'webhookOutbox'>, batch: Batch, at: Date): Promise<boolean> {
  const endpoint = await tx.webhookEndpoints.find(batch.accountId);
  if (!endpoint?.enabled) return false;
  const id = newId('evt');
  const createdAt = at.toISOString();
  const body: BatchEventBody = { id, type: 'batch.completed', created_at: createdAt, data: { batch: batchJson(batch) } };
  await tx.webhookOutbox.insertEvents([{ id, accountId: batch.accountId, type: body.type, payload: JSON.stringify(body), at: createdAt, giveUpAt: giveUpAtFor(at) }]);
  return true;
}
