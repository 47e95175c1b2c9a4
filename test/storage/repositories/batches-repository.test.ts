import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { MAX_BATCH_ITEMS, type BatchItemInput } from '../../../src/domain/batch.ts';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../../support/databases.ts';
import { createCustomer } from '../../support/fixtures.ts';

describe.each(DIALECTS)('BatchesRepository: storing and claiming batches (%s)', (dialect) => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase(dialect);
  });
  afterAll(async () => {
    await t?.destroy();
  });

  const newBatch = (id: string, customer: { accountId: string; tokenId: string }, items: BatchItemInput[], itemsJson?: string) => ({
    id,
    accountId: customer.accountId,
    tokenId: customer.tokenId,
    items,
    ...(itemsJson === undefined ? {} : { itemsJson }),
    idempotencyKey: null,
    bodyHash: id,
    at: new Date().toISOString(),
  });

  test('the items are stored in input order, each its own input, from the JSON of the list', async () => {
    const customer = await createCustomer(t.repos);
    // Every kind of item, and texts JSON escapes: a quote, a backslash, a line break, non-ASCII.
    const items: BatchItemInput[] = [
      { vin: '1HGCM82633A004352' },
      { auction: 'copart', lot_id: 12345678 },
      { vin: 'a "quoted" \\ vin\nwith a break' },
      { vin: 'ÄÖÜ 車 😀' },
      { auction: 'iaai', lot_id: 2147483647 },
    ];
    await t.repos.batches.create(newBatch('bat_order', customer, items, JSON.stringify(items)));
    const pending = await t.repos.batches.pendingItems('bat_order', 0, MAX_BATCH_ITEMS);
    expect(pending).toEqual(items.map((input, index) => ({ index, input })));
    const stored = await t.repos.batches.items('bat_order', 0, MAX_BATCH_ITEMS);
    expect(stored.map((item) => [item.index, item.input, item.result, item.report])).toEqual(items.map((input, index) => [index, input, null, null]));
  });

  test('a batch whose row is refused leaves no items behind (SQLite writes them first, in the searches file)', async () => {
    const refused = new Error('the batch row was refused');
    await expect(
      t.db.dialect.storeBatch(
        t.db.kysely,
        () => Promise.reject(refused),
        'bat_refused',
        JSON.stringify([{ vin: '1HGCM82633A004352' }]),
      ),
    ).rejects.toBe(refused);
    expect(await t.repos.batches.pendingItems('bat_refused', 0, MAX_BATCH_ITEMS)).toEqual([]);
  });

  test('a full batch: a thousand items, none lost or moved; without itemsJson the items are serialised here', async () => {
    const customer = await createCustomer(t.repos);
    const items = Array.from({ length: MAX_BATCH_ITEMS }, (_, i): BatchItemInput => (i % 3 === 0 ? { auction: 'copart', lot_id: i + 1 } : { vin: `VIN${String(i).padStart(14, '0')}` }));
    const created = await t.repos.batches.create(newBatch('bat_full', customer, items));
    expect(created.kind === 'created' && created.batch.total).toBe(MAX_BATCH_ITEMS);
    const pending = await t.repos.batches.pendingItems('bat_full', 0, MAX_BATCH_ITEMS);
    expect(pending).toEqual(items.map((input, index) => ({ index, input })));
  });

  test('a claim answers each batch it took: its id, account and token; a claimed batch is not claimed again while its lease holds', async () => {
    const customer = await createCustomer(t.repos);
    await t.repos.batches.create(newBatch('bat_claim', customer, [{ vin: '1HGCM82633A004352' }]));
    const now = new Date();
    const claimed = await t.repos.batches.claim({ owner: 'runner-a', now, leaseMs: 60_000, limit: 100 });
    expect(claimed).toContainEqual({ id: 'bat_claim', accountId: customer.accountId, tokenId: customer.tokenId });
    const again = await t.repos.batches.claim({ owner: 'runner-b', now, leaseMs: 60_000, limit: 100 });
    expect(again.map((batch) => batch.id)).not.toContain('bat_claim');
  });
});
