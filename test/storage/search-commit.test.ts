import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { isReportId } from '../../src/domain/ids.ts';
import { lotJson, type LotJson } from '../../src/domain/lot.ts';
import type { CommitResult, SearchToCommit } from '../../src/storage/search-commit.ts';
import type { SearchKind } from '../../src/domain/search.ts';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../support/databases.ts';
import { createCustomer, makeLot, principalAt, type Customer } from '../support/fixtures.ts';
import { randomVin } from './repositories/helpers.ts';

const HOUR = 60 * 60 * 1000;
const DAY = 24 * HOUR;
const PERIOD = '2026-03-01T00:00:00.000Z';
const NOW = new Date('2026-03-10T12:00:00.000Z');

describe.each(DIALECTS)('SearchCommit and the ledger: searches, reports, usage counters, idempotency keys (%s)', (dialect) => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase(dialect);
  });
  afterAll(async () => {
    await t?.destroy();
  });

  async function commit(customer: Customer, overrides: Partial<SearchToCommit> = {}): Promise<CommitResult> {
    return t.repos.searchCommit.commit({
      principal: await principalAt(t.repos, customer.tokenId, overrides.now ?? NOW),
      accountId: customer.accountId,
      tokenId: customer.tokenId,
      vin: randomVin(),
      now: NOW,
      periodStart: PERIOD,
      quota: 1000,
      lots: [],
      idempotencyKey: null,
      ...overrides,
    });
  }

  function lotsFor(vin: string, n = 2): LotJson[] {
    return Array.from({ length: n }, (_, i) => lotJson(makeLot({ vin, price: 1000 + i, sale_date: `2024-0${i + 1}-01T00:00:00.000Z` })));
  }

  /** What the account has in the ledger: search records, reports, the period's counter, idempotency keys. */
  async function ledger(customer: Customer, periodStart = PERIOD) {
    const keys = await t.db.kysely.selectFrom('idempotency_keys').select('key').where('account_id', '=', customer.accountId).execute();
    return {
      searches: await t.repos.searches.countForAccount(customer.accountId),
      reports: await t.repos.reports.countForAccount(customer.accountId),
      used: await t.repos.usageCounters.usedInPeriod(customer.accountId, periodStart),
      keys: keys.map((k) => k.key).sort(),
    };
  }

  test('a search that found lots commits a count, a search record and a report snapshot', async () => {
    const customer = await createCustomer(t.repos);
    const vin = randomVin();
    const lots = lotsFor(vin);
    const result = await commit(customer, { vin, lots });
    if (result.kind !== 'committed') throw new Error(`expected committed, got ${result.kind}`);
    expect(result.used).toBe(1);
    expect(result.search).toEqual({
      searchId: expect.stringMatching(/^srch_[0-9a-z]{20}$/),
      reportId: expect.any(String),
      vin,
      createdAt: NOW.toISOString(),
      lots,
    });
    expect(isReportId(result.search.reportId!)).toBe(true);

    expect(await t.repos.searches.listForAccount(customer.accountId)).toEqual([
      {
        id: result.search.searchId,
        account_id: customer.accountId,
        token_id: customer.tokenId,
        vin,
        created_at: NOW.toISOString(),
        outcome: 'found',
        report_id: result.search.reportId,
        period_start: PERIOD,
        sandbox: 0,
        kind: 'search',
      },
    ]);
    expect(await t.repos.reports.findById(result.search.reportId!)).toEqual({
      id: result.search.reportId,
      accountId: customer.accountId,
      vin,
      createdAt: NOW.toISOString(),
      lots: lots.map((text) => JSON.parse(text)),
      sandbox: false,
      // The token that searched: its brand is the report's (white label).
      tokenId: customer.tokenId,
    });
    expect(await ledger(customer)).toEqual({ searches: 1, reports: 1, used: 1, keys: [] });
  });

  test.each(['names versions', 'copies the lots'])('a report is a snapshot: later changes to the lots do not alter it (the snapshot %s)', async (form) => {
    const customer = await createCustomer(t.repos);
    const vin = randomVin();
    const lot = makeLot({ vin, price: 500 });
    await t.repos.lots.upsertBatch([lot]);
    const found = await t.repos.lots.findJsonByVin(vin);
    const result = await commit(customer, { vin, lots: found.lots, named: form === 'names versions' ? found.named : null });
    await t.repos.lots.upsertBatch([{ ...lot, price: 900 }]);
    const reportId = (result as { search: { reportId: string } }).search.reportId;
    const stored = await t.db.kysely.selectFrom('reports').select('lots').where('id', '=', reportId).executeTakeFirstOrThrow();
    expect(stored.lots.startsWith('{"versions":')).toBe(form === 'names versions');
    expect((await t.repos.reports.findById(reportId))?.lots).toEqual([lot]);
    expect(await t.repos.reports.lotsJsonOf(reportId)).toBe(`[${found.lots.join(',')}]`);
  });

  test('a not-found search (no lots) counts and writes an outcome not_found record with no report', async () => {
    const customer = await createCustomer(t.repos);
    const vin = randomVin();
    const result = await commit(customer, { vin, lots: [] });
    expect(result).toEqual({
      kind: 'committed',
      used: 1,
      reportBaseUrl: null,
      search: { searchId: expect.stringMatching(/^srch_/), reportId: null, vin, createdAt: NOW.toISOString(), lots: [] },
    });
    const [record] = await t.repos.searches.listForAccount(customer.accountId);
    expect(record).toMatchObject({ vin, outcome: 'not_found', report_id: null, token_id: customer.tokenId, period_start: PERIOD });
    expect(await ledger(customer)).toEqual({ searches: 1, reports: 0, used: 1, keys: [] });
  });

  test('reports.findById of an unknown id is undefined', async () => {
    expect(await t.repos.reports.findById('6f1c4b1e-3f57-4c35-9d5e-3a4c6b1d2e0f')).toBeUndefined();
  });

  test('quota_exceeded once the quota is used, and nothing is written on rejection', async () => {
    const customer = await createCustomer(t.repos);
    for (let i = 1; i <= 3; i++) {
      const result = await commit(customer, { quota: 3, lots: i === 2 ? [] : lotsFor(randomVin(), 1) });
      expect(result).toMatchObject({ kind: 'committed', used: i });
    }
    const before = await ledger(customer);
    expect(before).toEqual({ searches: 3, reports: 2, used: 3, keys: [] });

    expect(await commit(customer, { quota: 3, lots: lotsFor(randomVin()) })).toEqual({ kind: 'quota_exceeded', used: 3 });
    expect(await commit(customer, { quota: 3, lots: [], idempotencyKey: 'rejected-key' })).toEqual({ kind: 'quota_exceeded', used: 3 });
    expect(await ledger(customer)).toEqual(before);

    // The rejected key was not kept: with room in the quota it counts as a new search.
    const vin = randomVin();
    expect(await commit(customer, { quota: 4, vin, idempotencyKey: 'rejected-key' })).toMatchObject({ kind: 'committed', used: 4 });
  });

  test('a plan downgraded below the usage refuses without counting', async () => {
    const customer = await createCustomer(t.repos);
    for (let i = 0; i < 5; i++) await commit(customer);
    expect(await commit(customer, { quota: 2 })).toEqual({ kind: 'quota_exceeded', used: 5 });
    expect((await ledger(customer)).used).toBe(5);
  });

  test('each billing period has its own counter; usedInPeriod reads it', async () => {
    const customer = await createCustomer(t.repos);
    const next = '2026-04-01T00:00:00.000Z';
    expect(await t.repos.usageCounters.usedInPeriod(customer.accountId, PERIOD)).toBe(0);
    await commit(customer, { quota: 2 });
    await commit(customer, { quota: 2 });
    expect(await commit(customer, { quota: 2 })).toMatchObject({ kind: 'quota_exceeded' });
    expect(await commit(customer, { quota: 2, periodStart: next, now: new Date('2026-04-01T00:00:00.000Z') })).toMatchObject({ kind: 'committed', used: 1 });
    expect(await t.repos.usageCounters.usedInPeriod(customer.accountId, PERIOD)).toBe(2);
    expect(await t.repos.usageCounters.usedInPeriod(customer.accountId, next)).toBe(1);
    // Counters are per account.
    const other = await createCustomer(t.repos);
    expect(await t.repos.usageCounters.usedInPeriod(other.accountId, PERIOD)).toBe(0);
  });

  test('same Idempotency-Key and VIN within 24 hours replays the same search without counting', async () => {
    const customer = await createCustomer(t.repos);
    const vin = randomVin();
    const lots = lotsFor(vin);
    const first = await commit(customer, { vin, lots, idempotencyKey: 'order-42' });
    if (first.kind !== 'committed') throw new Error(first.kind);
    await commit(customer); // another, unrelated search in between

    // Later lots must not leak into the replay: it is the original report.
    const replay = await commit(customer, { vin, lots: lotsFor(vin, 5), idempotencyKey: 'order-42', now: new Date(NOW.getTime() + DAY - 1) });
    expect(replay).toEqual({ kind: 'replayed', used: 2, reportBaseUrl: null, search: first.search });
    expect(await ledger(customer)).toEqual({ searches: 2, reports: 1, used: 2, keys: ['order-42'] });
  });

  test('a replay is served even when the quota is used up', async () => {
    const customer = await createCustomer(t.repos);
    const vin = randomVin();
    const first = await commit(customer, { vin, quota: 1, lots: lotsFor(vin), idempotencyKey: 'k' });
    expect(first.kind).toBe('committed');
    const replay = await commit(customer, { vin, quota: 1, lots: lotsFor(vin), idempotencyKey: 'k' });
    expect(replay).toMatchObject({ kind: 'replayed', used: 1 });
    expect((replay as { search: unknown }).search).toEqual((first as { search: unknown }).search);
  });

  test('a not-found search replays as not found', async () => {
    const customer = await createCustomer(t.repos);
    const vin = randomVin();
    const first = await commit(customer, { vin, idempotencyKey: 'nf' });
    const replay = await commit(customer, { vin, idempotencyKey: 'nf', lots: lotsFor(vin) });
    expect(replay).toEqual({ kind: 'replayed', used: 1, reportBaseUrl: null, search: (first as { search: unknown }).search });
    expect((replay as { search: { reportId: unknown } }).search.reportId).toBeNull();
  });

  test('after 24 hours the same key counts again, and the new search is the one replayed next', async () => {
    const customer = await createCustomer(t.repos);
    const vin = randomVin();
    const first = await commit(customer, { vin, lots: lotsFor(vin), idempotencyKey: 'daily' });
    const later = new Date(NOW.getTime() + DAY);
    const second = await commit(customer, { vin, lots: lotsFor(vin), idempotencyKey: 'daily', now: later });
    if (first.kind !== 'committed' || second.kind !== 'committed') throw new Error(`${first.kind} ${second.kind}`);
    expect(second.used).toBe(2);
    expect(second.search.searchId).not.toBe(first.search.searchId);
    expect(second.search.reportId).not.toBe(first.search.reportId);
    expect(second.search.createdAt).toBe(later.toISOString());

    const third = await commit(customer, { vin, idempotencyKey: 'daily', now: new Date(later.getTime() + HOUR) });
    expect(third).toEqual({ kind: 'replayed', used: 2, reportBaseUrl: null, search: second.search });
    expect(await ledger(customer)).toEqual({ searches: 2, reports: 2, used: 2, keys: ['daily'] });
  });

  test('the same key with another VIN is an idempotency_conflict and writes nothing', async () => {
    const customer = await createCustomer(t.repos);
    const vin = randomVin();
    await commit(customer, { vin, idempotencyKey: 'conflict' });
    const before = await ledger(customer);
    expect(await commit(customer, { vin: randomVin(), idempotencyKey: 'conflict', lots: lotsFor(vin) })).toEqual({
      kind: 'idempotency_conflict',
      originalVin: vin,
    });
    expect(await ledger(customer)).toEqual(before);
    // Past 24 hours the key is free for any VIN.
    expect(await commit(customer, { vin: randomVin(), idempotencyKey: 'conflict', now: new Date(NOW.getTime() + DAY) })).toMatchObject({
      kind: 'committed',
      used: 2,
    });
  });

  test('keys belong to one account: the same key elsewhere is a new search', async () => {
    const a = await createCustomer(t.repos);
    const b = await createCustomer(t.repos);
    const vin = randomVin();
    const first = await commit(a, { vin, idempotencyKey: 'shared' });
    const second = await commit(b, { vin, idempotencyKey: 'shared' });
    expect(first.kind).toBe('committed');
    expect(second.kind).toBe('committed');
    expect((second as { search: { searchId: string } }).search.searchId).not.toBe((first as { search: { searchId: string } }).search.searchId);
    expect(await commit(b, { vin: randomVin(), idempotencyKey: 'shared' })).toMatchObject({ kind: 'idempotency_conflict' });
  });

  test('all or nothing: a failure after counting rolls the count back', async () => {
    const customer = await createCustomer(t.repos);
    const vin = randomVin();
    // A kind the search record's CHECK refuses fails its insert, after the count and the report.
    // (Not an unknown token: on SQLite the record is in the searches file, and a foreign key to
    // the main file's tokens cannot be enforced there; the commit re-checks the token instead.)
    await expect(commit(customer, { vin, lots: lotsFor(vin), kind: 'no-such-kind' as SearchKind, idempotencyKey: 'x' })).rejects.toThrow();
    expect(await ledger(customer)).toEqual({ searches: 0, reports: 0, used: 0, keys: [] });
  });

  test('countForAccount and listForAccount: newest first, limited', async () => {
    const customer = await createCustomer(t.repos);
    const times = [3, 1, 2].map((h) => new Date(NOW.getTime() + h * HOUR));
    for (const now of times) await commit(customer, { now });
    expect(await t.repos.searches.countForAccount(customer.accountId)).toBe(3);
    const listed = await t.repos.searches.listForAccount(customer.accountId);
    expect(listed.map((s) => s.created_at)).toEqual([3, 2, 1].map((h) => new Date(NOW.getTime() + h * HOUR).toISOString()));
    expect((await t.repos.searches.listForAccount(customer.accountId, 2)).map((s) => s.created_at)).toEqual(listed.slice(0, 2).map((s) => s.created_at));
    expect(await t.repos.searches.listForAccount((await createCustomer(t.repos)).accountId)).toEqual([]);
  });

  test('idempotencyKeys.deleteExpired drops keys 24 hours old or older and nothing else', async () => {
    const customer = await createCustomer(t.repos);
    const t0 = new Date('2030-01-01T00:00:00.000Z');
    const vinOld = randomVin();
    const vinNew = randomVin();
    await commit(customer, { vin: vinOld, now: t0, idempotencyKey: 'old' });
    const kept = await commit(customer, { vin: vinNew, now: new Date(t0.getTime() + HOUR), idempotencyKey: 'new' });
    const at = new Date(t0.getTime() + DAY);
    // Other tests' keys are older still and go too.
    const { n: expired } = await t.db.kysely
      .selectFrom('idempotency_keys')
      .select((eb) => eb.fn.countAll<string | number>().as('n'))
      .where('created_at', '<=', t0.toISOString())
      .executeTakeFirstOrThrow();
    expect(Number(expired)).toBeGreaterThanOrEqual(1);
    expect(await t.repos.idempotencyKeys.deleteExpired(at)).toBe(Number(expired));
    expect((await ledger(customer)).keys).toEqual(['new']);
    expect(await t.repos.searches.countForAccount(customer.accountId)).toBe(2);
    expect(await commit(customer, { vin: vinNew, now: at, idempotencyKey: 'new' })).toEqual({
      kind: 'replayed',
      used: 2,
      reportBaseUrl: null,
      search: (kept as { search: unknown }).search,
    });
    expect(await t.repos.idempotencyKeys.deleteExpired(at)).toBe(0);
    expect(await t.repos.idempotencyKeys.deleteExpired(new Date(at.getTime() + HOUR))).toBe(1);
    expect((await ledger(customer)).keys).toEqual([]);
  });

  test("a batch item's search writes the item's result in its own commit; an item with a result is neither searched nor counted again", async () => {
    const customer = await createCustomer(t.repos, { quota: 3 });
    const batchId = `bat_commit_${dialect}_${Date.now()}`;
    const vins = [randomVin(), randomVin(), randomVin(), randomVin()];
    await t.repos.batches.create({ id: batchId, accountId: customer.accountId, tokenId: customer.tokenId, items: vins.map((vin) => ({ vin })), idempotencyKey: null, bodyHash: 'h', at: NOW.toISOString() });
    const item = (index: number) => ({ batchId, index, publicBaseUrl: 'https://api.example', notFoundMessage: `nothing for ${vins[index]}` });
    const results = async () => (await t.repos.batches.items(batchId, 0, 10)).map((i) => i.result);

    const found = await commit(customer, { quota: 3, vin: vins[0], lots: lotsFor(vins[0]!), batchItem: item(0) });
    if (found.kind !== 'committed') throw new Error(`expected committed, got ${found.kind}`);
    await commit(customer, { quota: 3, vin: vins[1], batchItem: item(1) });
    const reportId = found.search.reportId!;
    const written = [
      { status: 200, reportId, reportUrl: `https://api.example/report/${reportId}`, message: null },
      { status: 404, reportId: null, reportUrl: null, message: `nothing for ${vins[1]}` },
      null,
      null,
    ];
    expect(await results()).toEqual(written);

    expect(await ledger(customer)).toMatchObject({ searches: 2, reports: 1, used: 2 });

    // A second run of items 0 and 1 (a runner that took the lease over, found or not found the
    // first time) finds their results in their rows: nothing counted, recorded or overwritten.
    expect(await commit(customer, { quota: 3, vin: vins[0], lots: lotsFor(vins[0]!), batchItem: item(0) })).toEqual({ kind: 'item_done' });
    expect(await commit(customer, { quota: 3, vin: vins[1], batchItem: { ...item(1), notFoundMessage: 'other words' } })).toEqual({ kind: 'item_done' });
    expect(await results()).toEqual(written);
    expect(await ledger(customer)).toMatchObject({ searches: 2, reports: 1, used: 2 });
    // An item whose row the runner wrote itself (a 429 past the quota, a 422) is not searched either.
    await t.repos.batches.recordItems(batchId, [{ index: 3, result: { status: 422, reportId: null, reportUrl: null, message: 'bad' } }], NOW);
    expect(await commit(customer, { quota: 3, vin: vins[3], batchItem: item(3) })).toEqual({ kind: 'item_done' });
    expect(await ledger(customer)).toMatchObject({ used: 2 });

    // A search refused by the quota writes nothing: the runner writes that item's 429 itself.
    await commit(customer, { quota: 3, vin: vins[2], batchItem: item(2) });
    expect(await ledger(customer)).toMatchObject({ searches: 3, reports: 1, used: 3 });
    const other = `${batchId}_b`;
    await t.repos.batches.create({ id: other, accountId: customer.accountId, tokenId: customer.tokenId, items: [{ vin: vins[0]! }], idempotencyKey: null, bodyHash: 'h', at: NOW.toISOString() });
    expect((await commit(customer, { quota: 3, vin: vins[0], batchItem: { ...item(0), batchId: other } })).kind).toBe('quota_exceeded');
    expect((await t.repos.batches.items(other, 0, 10))[0]!.result).toBeNull();
    expect(await ledger(customer)).toMatchObject({ searches: 3, reports: 1, used: 3, keys: [] });
  });
});
