import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiTokenService } from '../../src/accounts/api-tokens.ts';
import { canSearch } from '../../src/domain/principal.ts';
import { MemoryRateLimiter } from '../../src/limits/rate/memory-rate-limiter.ts';
import { Metrics } from '../../src/observability/metrics.ts';
import { SearchService, type CountedAnswer, type CountedOutcome } from '../../src/search/search-service.ts';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../support/databases.ts';
import { createCustomer, makeLot, principalAt, validVin } from '../support/fixtures.ts';

/**
 * SearchService.runCounted: a counted call that stores no report (catalogue, market, a lot's
 * history) in the contract's order, counted, recorded by kind and keyed like a search. On both
 * databases: their search commits differ (SQLite's group commit, PostgreSQL's pipelined guesses).
 */
describe.each(DIALECTS)('SearchService.runCounted on %s', (dialect) => {
  let t: TestDatabase;
  let service: SearchService;
  let limiterMs = 0;
  const storedVin = validVin('2T1BURHE0JC01010');

  beforeAll(async () => {
    t = await createTestDatabase(dialect);
    const metrics = new Metrics();
    service = new SearchService({
      repos: t.repos,
      principals: new ApiTokenService(t.repos, metrics),
      rateLimiter: new MemoryRateLimiter(() => limiterMs),
      metrics,
      publicBaseUrl: 'https://vinhistory.test',
    });
    await t.repos.lots.upsertBatch([makeLot({ vin: storedVin, auction: 'copart', lot_id: 62_000_001 })]);
  });
  afterAll(async () => {
    await t?.destroy();
  });

  async function customer(options: { quota?: number; rate?: number } = {}) {
    const { accountId, tokenId } = await createCustomer(t.repos, { quota: options.quota ?? 100, rate: options.rate ?? 100 });
    const principal = await principalAt(t.repos, tokenId, new Date());
    if (!canSearch(principal)) throw new Error('the customer cannot search');
    return { principal: principal, accountId, tokenId };
  }
  const nextWindow = () => {
    limiterMs += 1000;
  };
  /** An answer that counts how often it ran. */
  function answering<T>(answer: CountedAnswer<T>) {
    const calls = { n: 0 };
    return { calls, answer: () => { calls.n++; return Promise.resolve(answer); } };
  }
  const usedBy = (accountId: string, outcome: CountedOutcome<unknown>) =>
    'limits' in outcome ? t.repos.usageCounters.usedInPeriod(accountId, outcome.limits.quota.periodStart.toISOString()) : Promise.resolve(NaN);
  const records = async (accountId: string) => (await t.repos.searches.pageForAccount(accountId, { limit: 50 })).searches;

  it('counts a call that found something, records it by kind without a report, and answers its body', async () => {
    const { principal, accountId } = await customer();
    const { answer } = answering({ kind: 'found', body: { lots: [1, 2] } });
    const outcome = await service.runCounted(principal, { kind: 'catalogue', query: 'make=HONDA' }, undefined, answer);
    expect(outcome).toMatchObject({ kind: 'found', body: { lots: [1, 2] }, replayed: false });
    expect(await usedBy(accountId, outcome)).toBe(1);
    const [record] = await records(accountId);
    expect(record).toMatchObject({ kind: 'catalogue', outcome: 'found', reportId: null, vin: 'catalogue?make=HONDA' });
  });

  it('counts a call that found nothing as a not_found with its message', async () => {
    const { principal, accountId } = await customer();
    const outcome = await service.runCounted(principal, { kind: 'market', query: `vin=${storedVin}` }, undefined, answering({ kind: 'not_found', message: 'no vehicle' }).answer);
    expect(outcome).toMatchObject({ kind: 'not_found', message: 'no vehicle', replayed: false });
    expect(await usedBy(accountId, outcome)).toBe(1);
    expect((await records(accountId))[0]).toMatchObject({ kind: 'market', outcome: 'not_found' });
  });

  it('refuses a malformed Idempotency-Key and the per-second rate before the call runs, counting nothing', async () => {
    const { principal, accountId } = await customer({ rate: 1 });
    const probe = answering({ kind: 'found', body: 1 });
    expect(await service.runCounted(principal, { kind: 'catalogue', query: '' }, 'with space', probe.answer)).toMatchObject({ kind: 'invalid_input', field: 'Idempotency-Key' });
    nextWindow();
    expect((await service.runCounted(principal, { kind: 'catalogue', query: '' }, undefined, probe.answer)).kind).toBe('found');
    const refused = await service.runCounted(principal, { kind: 'catalogue', query: '' }, undefined, probe.answer);
    expect(refused.kind).toBe('rate_limited');
    expect(probe.calls.n).toBe(1);
    expect(await records(accountId)).toHaveLength(1);
  });

  it('refuses past the monthly quota and writes no record', async () => {
    const { principal, accountId } = await customer({ quota: 1 });
    expect((await service.runCounted(principal, { kind: 'market', query: 'a' }, undefined, answering({ kind: 'found', body: 1 }).answer)).kind).toBe('found');
    const refused = await service.runCounted(principal, { kind: 'market', query: 'b' }, undefined, answering({ kind: 'found', body: 1 }).answer);
    expect(refused.kind).toBe('quota_exceeded');
    expect(await usedBy(accountId, refused)).toBe(1);
    expect(await records(accountId)).toHaveLength(1);
  });

  it('replays the same query under the same key uncounted, answering afresh; another query or a search under it is a conflict', async () => {
    const { principal, accountId } = await customer();
    const first = await service.runCounted(principal, { kind: 'catalogue', query: 'make=HONDA' }, 'k-1', answering({ kind: 'found', body: 'first' }).answer);
    const again = await service.runCounted(principal, { kind: 'catalogue', query: 'make=HONDA' }, 'k-1', answering({ kind: 'found', body: 'second' }).answer);
    expect(first).toMatchObject({ kind: 'found', body: 'first', replayed: false });
    expect(again).toMatchObject({ kind: 'found', body: 'second', replayed: true });
    expect(await usedBy(accountId, again)).toBe(1);
    expect(await service.runCounted(principal, { kind: 'catalogue', query: 'make=TOYOTA' }, 'k-1', answering({ kind: 'found', body: 1 }).answer)).toEqual({
      kind: 'idempotency_conflict',
      original: 'a catalogue call with make=HONDA',
    });
    // The same text under another kind is another query.
    expect((await service.runCounted(principal, { kind: 'market', query: 'make=HONDA' }, 'k-1', answering({ kind: 'found', body: 1 }).answer)).kind).toBe('idempotency_conflict');
    expect(await service.search(principal, storedVin, 'k-1')).toMatchObject({ kind: 'idempotency_conflict' });
    expect((await service.search(principal, storedVin, 'k-2')).kind).toBe('found');
    expect(await service.runCounted(principal, { kind: 'catalogue', query: '' }, 'k-2', answering({ kind: 'found', body: 1 }).answer)).toEqual({
      kind: 'idempotency_conflict',
      original: `VIN ${storedVin}`,
    });
    expect(await records(accountId)).toHaveLength(2);
  });

  it('records searches and lookups by lot by their kinds, and counts calls by kind', async () => {
    const { principal, accountId } = await customer();
    const from = new Date(Date.now() - 60_000).toISOString();
    await service.search(principal, storedVin, undefined);
    await service.searchByLot(principal, 'copart', '62000001', undefined);
    await service.searchByLot(principal, 'copart', '62000002', undefined);
    await service.runCounted(principal, { kind: 'history', query: 'copart/62000001' }, undefined, answering({ kind: 'found', body: 1 }).answer);
    const kinds = (await records(accountId)).map((record) => `${record.kind}:${record.outcome}`).sort();
    expect(kinds).toEqual(['history:found', 'lot:found', 'lot:not_found', 'search:found']);
    const to = new Date(Date.now() + 60_000).toISOString();
    expect(await t.repos.searches.countsByKind(accountId, from, to)).toEqual([
      { kind: 'history', count: 1 },
      { kind: 'lot', count: 2 },
      { kind: 'search', count: 1 },
    ]);
  });

  it('answers unauthenticated for a token revoked after it was read, and counts nothing', async () => {
    const { principal, accountId, tokenId } = await customer();
    expect(await t.repos.tokens.revokeForAccount(accountId, tokenId)).toBe(true);
    const probe = answering({ kind: 'found', body: 1 });
    expect(await service.runCounted(principal, { kind: 'catalogue', query: '' }, undefined, probe.answer)).toEqual({ kind: 'unauthenticated' });
    expect(await records(accountId)).toHaveLength(0);
  });

  it("records a sandbox token's call without counting it", async () => {
    const { accountId } = await customer();
    const { row } = await t.repos.tokens.create(accountId, 'sandbox', new Date(), 'test');
    const principal = await principalAt(t.repos, row.id, new Date());
    if (!canSearch(principal)) throw new Error('a sandbox token can always search');
    const outcome = await service.runCounted(principal, { kind: 'catalogue', query: '' }, undefined, answering({ kind: 'found', body: 1 }).answer);
    expect(outcome).toMatchObject({ kind: 'found' });
    expect(await usedBy(accountId, outcome)).toBe(0);
    expect((await records(accountId))[0]).toMatchObject({ kind: 'catalogue', sandbox: true });
  });
});
