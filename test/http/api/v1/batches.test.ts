import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../../../src/app.ts';
import { MemoryRateLimiter } from '../../../../src/limits/rate/memory-rate-limiter.ts';
import { buildAppOn, testConfig } from '../../../support/app.ts';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../../../support/databases.ts';
import { createCustomer, makeLot, principalAt, validVin } from '../../../support/fixtures.ts';
import { expectDocumentedStatuses } from '../../../support/documented-statuses.ts';

describe.each(DIALECTS)('batches (/api/v1/batches) on %s', (dialect) => {
  let database: TestDatabase;
  let app: App;
  const known = validVin('1FTFW1ET5DFB0001');
  const other = validVin('1FTFW1ET5DFB0002');
  const unknown = validVin('1FTFW1ET5DFB0099');
  let lotId = 0;

  beforeAll(async () => {
    database = await createTestDatabase(dialect);
    app = await buildAppOn({ config: testConfig({ OUTBOUND_ALLOW_PRIVATE: 'true' }), db: database.db, rateLimiter: new MemoryRateLimiter() });
    await app.ready();
    const lots = [makeLot({ vin: known, brand: 'FORD' }), makeLot({ vin: known, brand: 'FORD' }), makeLot({ vin: other, brand: 'HONDA' })];
    lotId = lots[2]!.lot_id;
    await database.repos.lots.upsertBatch(lots);
  });
  afterAll(async () => {
    await app?.close();
    await database?.destroy();
    expectDocumentedStatuses();
  });

  const post = (token: string, payload: unknown, headers: Record<string, string> = {}) =>
    app.inject({ method: 'POST', url: '/api/v1/batches', headers: { authorization: token, ...headers }, ...(typeof payload === 'string' ? { payload } : { payload: payload as object }) });
  const get = (token: string, url: string, headers: Record<string, string> = {}) => app.inject({ method: 'GET', url, headers: { authorization: token, ...headers } });
  const used = async (accountId: string) => (await app.services.usage.forAccount(accountId))!.used;

  it('runs JSON items as counted searches: 202 queued, done with counts, NDJSON results in input order, CSV one row per lot', async () => {
    const customer = await createCustomer(database.repos, { rate: 100 });
    const created = await post(customer.token, { items: [{ vin: known }, { vin: 'NOT-A-VIN' }, { vin: unknown }, { auction: 'copart', lot_id: lotId }] });
    expect(created.statusCode).toBe(202);
    const batch = created.json();
    expect(batch).toEqual({ id: expect.stringMatching(/^bat_/), status: 'queued', total: 4, done: 0, counts: {}, created_at: expect.any(String), finished_at: null });

    expect(await app.services.batchRunner.runDue()).toBe(1);
    const done = (await get(customer.token, `/api/v1/batches/${batch.id}`)).json();
    expect(done).toMatchObject({ id: batch.id, status: 'done', total: 4, done: 4, counts: { 200: 2, 404: 1, 422: 1 } });
    // The 200s and the 404 were counted, as searches are; the malformed VIN was not.
    expect(await used(customer.accountId)).toBe(3);

    const results = await get(customer.token, `/api/v1/batches/${batch.id}/results`);
    expect(results.statusCode).toBe(200);
    expect(results.headers['content-type']).toMatch(/^application\/x-ndjson/);
    const lines = results.body.trimEnd().split('\n').map((line) => JSON.parse(line));
    expect(lines.map((line) => [line.index, line.status])).toEqual([[0, 200], [1, 422], [2, 404], [3, 200]]);
    expect(lines[0].report).toMatchObject({ status: 'success', vin: known, report_url: expect.stringMatching(/\/report\/[0-9a-f-]{36}$/) });
    expect(lines[0].report.lots).toHaveLength(2);
    expect(lines[0].message).toBeNull();
    expect(lines[1]).toMatchObject({ input: { vin: 'NOT-A-VIN' }, report: null, message: expect.stringMatching(/17 characters/) });
    expect(lines[2].message).toBe(`No auction records were found for VIN ${unknown}.`);
    expect(lines[3]).toMatchObject({ input: { auction: 'copart', lot_id: lotId }, report: { vin: other } });
    // The report is the one the search stored: its page exists.
    expect((await app.inject({ method: 'GET', url: new URL(lines[0].report.report_url).pathname })).statusCode).toBe(200);

    const csv = await get(customer.token, `/api/v1/batches/${batch.id}/results`, { accept: 'text/csv' });
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    const rows = csv.body.trimEnd().split('\n');
    expect(rows[0]).toMatch(/^index,input,status,message,report_url,/);
    // Two lots for the first item, one row each for the others.
    expect(rows.slice(1).map((row) => row.split(',').slice(0, 3).join(','))).toEqual([`0,${known},200`, `0,${known},200`, '1,NOT-A-VIN,422', `2,${unknown},404`, `3,copart/${lotId},200`]);
  });

  it('takes a CSV with a vin column (and lots by auction and lot_id), and refuses one without', async () => {
    const customer = await createCustomer(database.repos, { rate: 100 });
    const csv = await post(customer.token, `Stock,VIN,auction,lot_id\n1,${known},,\n\n2,,copart,${lotId}\n`, { 'content-type': 'text/csv' });
    expect(csv.statusCode).toBe(202);
    expect(csv.json().total).toBe(2);
    await app.services.batchRunner.runDue();
    expect((await get(customer.token, `/api/v1/batches/${csv.json().id}`)).json().counts).toEqual({ 200: 2 });

    const noVin = await post(customer.token, 'name\nx\n', { 'content-type': 'text/csv' });
    expect(noVin.statusCode).toBe(422);
    expect(noVin.json().errors.body[0]).toMatch(/vin column/);
    const badLot = await post(customer.token, 'vin,auction,lot_id\n,copart,abc\n', { 'content-type': 'text/csv' });
    expect(badLot.json().errors.items[0]).toMatch(/^Line 2: lot_id/);
    const unclosed = await post(customer.token, 'vin\n"1FT\n', { 'content-type': 'text/csv' });
    expect(unclosed.statusCode).toBe(422);
    expect((await post(customer.token, 'vin', { 'content-type': 'application/xml' })).statusCode).toBe(415);
  });

  it('holds the bounds: 1 to 1,000 items, each a VIN or a lot, the body size, the Idempotency-Key', async () => {
    const customer = await createCustomer(database.repos, { rate: 100 });
    const none = await post(customer.token, { items: [] });
    expect(none.statusCode).toBe(422);
    expect(none.json()).toMatchObject({ code: 'invalid_request', errors: { items: [expect.stringMatching(/1 to 1000 items; this one has none/)] } });
    const tooMany = await post(customer.token, { items: Array.from({ length: 1001 }, () => ({ vin: known })) });
    expect(tooMany.statusCode).toBe(422);
    expect(tooMany.json().errors.items[0]).toMatch(/has 1001/);
    expect((await post(customer.token, `vin\n${`${known}\n`.repeat(1001)}`, { 'content-type': 'text/csv' })).json().errors.items[0]).toMatch(/has 1001/);
    const both = await post(customer.token, { items: [{ vin: known }, { vin: known, auction: 'copart', lot_id: 1 }] });
    expect(both.json().errors.items).toEqual(['Item 1: give vin, or auction and lot_id, not both.']);
    expect((await post(customer.token, { items: [{ auction: 'copart', lot_id: -3 }] })).json().errors.items[0]).toMatch(/^Item 0: lot_id/);
    expect((await post(customer.token, { items: 'x' })).statusCode).toBe(422);
    expect((await post(customer.token, '{"items": [', { 'content-type': 'application/json' })).statusCode).toBe(400);
    const huge = await post(customer.token, `vin\n${'x'.repeat(600 * 1024)}\n`, { 'content-type': 'text/csv' });
    expect(huge.statusCode).toBe(413);
    expect((await post(customer.token, { items: [{ vin: known }] }, { 'idempotency-key': 'a'.repeat(256) })).json().errors['Idempotency-Key']).toHaveLength(1);
    // No batch was stored by any refusal.
    expect((await get(customer.token, '/api/v1/batches')).json().data).toEqual([]);

    const first = await post(customer.token, { items: [{ vin: known }] }, { 'idempotency-key': 'sale-42' });
    expect(first.statusCode).toBe(202);
    const again = await post(customer.token, { items: [{ vin: known }] }, { 'idempotency-key': 'sale-42' });
    expect(again.statusCode).toBe(200);
    expect(again.json().id).toBe(first.json().id);
    const conflict = await post(customer.token, { items: [{ vin: other }] }, { 'idempotency-key': 'sale-42' });
    expect(conflict.statusCode).toBe(422);
    expect(conflict.json()).toMatchObject({ code: 'idempotency_conflict', errors: { 'Idempotency-Key': [expect.stringContaining(first.json().id)] } });
  });

  it('lists with cursor paging, keeps other accounts out (404), and answers 401 and 402', async () => {
    const customer = await createCustomer(database.repos, { rate: 100 });
    const stranger = await createCustomer(database.repos);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await post(customer.token, { items: [{ vin: known }] })).json().id);
    const first = (await get(customer.token, '/api/v1/batches?limit=2')).json();
    expect(first.data).toHaveLength(2);
    const second = (await get(customer.token, `/api/v1/batches?limit=2&cursor=${first.next_cursor}`)).json();
    expect(second.next_cursor).toBeNull();
    expect([...first.data, ...second.data].map((b: { id: string }) => b.id).sort()).toEqual([...ids].sort());
    expect((await get(customer.token, '/api/v1/batches?cursor=nonsense')).statusCode).toBe(422);
    expect((await get(customer.token, '/api/v1/batches?limit=101')).statusCode).toBe(422);

    expect((await get(stranger.token, `/api/v1/batches/${ids[0]}`)).statusCode).toBe(404);
    expect((await get(stranger.token, `/api/v1/batches/${ids[0]}/results`)).statusCode).toBe(404);
    expect((await get(customer.token, `/api/v1/batches/${'x'.repeat(65)}`)).statusCode).toBe(422);
    const anonymous = await app.inject({ method: 'GET', url: '/api/v1/batches' });
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.body).toBe('{"message":"Unauthenticated."}');

    const lapsed = await createCustomer(database.repos);
    await database.db.kysely.updateTable('subscriptions').set({ status: 'cancelled' }).where('account_id', '=', lapsed.accountId).execute();
    expect((await post(lapsed.token, { items: [{ vin: known }] })).statusCode).toBe(402);
  });

  it('ends items past the quota as 429 items, not as an error of the batch', async () => {
    const customer = await createCustomer(database.repos, { quota: 2, rate: 100 });
    const batch = (await post(customer.token, { items: [{ vin: known }, { vin: unknown }, { vin: other }, { vin: known }] })).json();
    await app.services.batchRunner.runDue();
    const done = (await get(customer.token, `/api/v1/batches/${batch.id}`)).json();
    expect(done).toMatchObject({ status: 'done', counts: { 200: 1, 404: 1, 429: 2 } });
    const lines = (await get(customer.token, `/api/v1/batches/${batch.id}/results`)).body.trimEnd().split('\n').map((line) => JSON.parse(line));
    expect(lines[3].message).toMatch(/^Monthly quota exceeded/);
    expect(await used(customer.accountId)).toBe(2);
  });

  it('counts no item twice when a run died after an item\'s search committed, and resumes a batch whose lease ended', async () => {
    const customer = await createCustomer(database.repos, { rate: 100 });
    const batch = (await post(customer.token, { items: [{ vin: known }, { vin: other }, { vin: unknown }] })).json();
    // A runner that died: it held the lease, and committed item 0's search (with its result) before a kill -9.
    await database.repos.batches.claim({ owner: 'dead-instance', now: new Date(), leaseMs: 60_000, limit: 10 });
    const principal = await principalAt(database.repos, customer.tokenId, new Date());
    const itemSearch = () => app.services.search.search(principal as never, known, undefined, { rateLimit: 50, batchItem: { batchId: batch.id, index: 0 } });
    const searched = await itemSearch();
    expect(searched.kind).toBe('found');
    expect(await used(customer.accountId)).toBe(1);

    // Its lease still holds: nobody takes the batch over. Item 0 has the result its search committed.
    expect(await app.services.batchRunner.runDue()).toBe(0);
    expect((await get(customer.token, `/api/v1/batches/${batch.id}`)).json()).toMatchObject({ status: 'running', done: 1 });
    // Once it has ended, another runner does; item 0 keeps its result and is not counted again.
    await database.db.kysely.updateTable('batches').set({ lease_until: new Date(Date.now() - 1).toISOString() }).where('id', '=', batch.id).execute();
    expect(await app.services.batchRunner.runDue()).toBe(1);
    expect((await get(customer.token, `/api/v1/batches/${batch.id}`)).json()).toMatchObject({ status: 'done', counts: { 200: 2, 404: 1 } });
    expect(await used(customer.accountId)).toBe(3);
    // A runner that read item 0 as pending before the other's commit (a stalled one whose lease was taken over) counts nothing either.
    expect((await itemSearch()).kind).toBe('item_done');
    expect(await used(customer.accountId)).toBe(3);
    const first = JSON.parse((await get(customer.token, `/api/v1/batches/${batch.id}/results`)).body.split('\n')[0]!);
    expect(first.report.report_url).toBe(searched.kind === 'found' ? searched.report.report_url : null);
  });

  it('queues a batch.completed event for the account\'s webhook, once', async () => {
    const customer = await createCustomer(database.repos, { rate: 100 });
    const endpoint = await app.inject({ method: 'PUT', url: '/api/v1/webhook', headers: { authorization: customer.token }, payload: { url: 'http://127.0.0.1:9/hook' } });
    expect(endpoint.statusCode).toBeLessThan(300);
    const batch = (await post(customer.token, { items: [{ vin: known }] })).json();
    await app.services.batchRunner.runDue();
    await app.services.batchRunner.runDue();
    const deliveries = await database.repos.webhookOutbox.listDeliveries(customer.accountId, { limit: 10 });
    const events = deliveries.items.filter((d) => d.type === 'batch.completed');
    expect(events).toHaveLength(1);
    const body = JSON.parse(events[0]!.payload);
    expect(body).toMatchObject({ type: 'batch.completed', data: { batch: { id: batch.id, status: 'done', total: 1, done: 1, counts: { 200: 1 } } } });
    expect(body.data.batch).toEqual((await get(customer.token, `/api/v1/batches/${batch.id}`)).json());
  });
});
