import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiTokenService } from '../../src/accounts/api-tokens.ts';
import { canSearch, type SearchPrincipal } from '../../src/domain/principal.ts';
import { MemoryRateLimiter } from '../../src/limits/rate/memory-rate-limiter.ts';
import { Metrics } from '../../src/observability/metrics.ts';
import { SearchService, type SearchOutcome } from '../../src/search/search-service.ts';
import { createTestDatabase, type TestDatabase } from '../support/databases.ts';
import { createCustomer, makeLot, principalAt, validVin } from '../support/fixtures.ts';

const BASE_URL = 'https://vinhistory.test';

/**
 * SearchService alone, on SQLite in memory, step by step in the contract's order: validation,
 * rate, quota, lookup, commit, and the re-check of a principal that changed under the search.
 * The HTTP answers to these outcomes are test/http/api/v1/search.test.ts's.
 */
describe('SearchService', () => {
  let t: TestDatabase;
  let metrics: Metrics;
  let service: SearchService;
  // The rate limiter's clock, moved a second on to open a new window without waiting.
  let limiterMs = 0;
  const storedVin = validVin('1FTFW1ET5DFC1010');

  beforeAll(async () => {
    t = await createTestDatabase('sqlite');
    metrics = new Metrics();
    service = new SearchService({
      repos: t.repos,
      principals: new ApiTokenService(t.repos, metrics),
      rateLimiter: new MemoryRateLimiter(() => limiterMs),
      metrics,
      publicBaseUrl: BASE_URL,
    });
    await t.repos.lots.upsertBatch([makeLot({ vin: storedVin, auction: 'copart', lot_id: 61_000_001 })]);
  });
  afterAll(async () => {
    await t?.destroy();
  });

  async function customer(options: { quota?: number; rate?: number } = {}): Promise<{ principal: SearchPrincipal; accountId: string; tokenId: string }> {
    const { accountId, tokenId } = await createCustomer(t.repos, { quota: options.quota ?? 100, rate: options.rate ?? 100 });
    const principal = await principalAt(t.repos, tokenId, new Date());
    if (!canSearch(principal)) throw new Error('the customer cannot search');
    return { principal, accountId, tokenId };
  }
  const used = (accountId: string, outcome: SearchOutcome) =>
    'limits' in outcome ? t.repos.usageCounters.usedInPeriod(accountId, outcome.limits.quota.periodStart.toISOString()) : Promise.resolve(NaN);
  const nextWindow = () => {
    limiterMs += 1000;
  };

  describe('validation, before the rate', () => {
    it('refuses an invalid VIN with its field, and neither rates nor counts it', async () => {
      const { principal } = await customer({ rate: 1 });
      const outcome = await service.search(principal, 'ABC', undefined);
      expect(outcome).toMatchObject({ kind: 'invalid_input', field: 'vin' });
      expect((outcome as { messages: string[] }).messages.length).toBeGreaterThan(0);
      // The one request this second is still there to take.
      expect((await service.search(principal, storedVin, undefined)).kind).toBe('found');
    });

    it('refuses an Idempotency-Key outside 1 to 255 visible ASCII characters; trims one that is', async () => {
      const { principal } = await customer();
      for (const key of ['', '   ', 'with space', 'x'.repeat(256), 'é']) {
        expect(await service.search(principal, storedVin, key), JSON.stringify(key)).toMatchObject({ kind: 'invalid_input', field: 'Idempotency-Key' });
      }
      nextWindow();
      const first = await service.search(principal, storedVin, '  key-1 ');
      const again = await service.search(principal, storedVin, 'key-1');
      expect(first).toMatchObject({ kind: 'found', replayed: false });
      expect(again).toMatchObject({ kind: 'found', replayed: true });
    });

    it('refuses a lot lookup in an auction the service holds no lots from, or with a bad lot id', async () => {
      const { principal } = await customer();
      expect(await service.searchByLot(principal, 'nowhere', '61000001', undefined)).toMatchObject({ kind: 'invalid_input', field: 'auction' });
      expect(await service.searchByLot(principal, 'copart', 'not-a-number', undefined)).toMatchObject({ kind: 'invalid_input', field: 'lot_id' });
    });
  });

  describe('rate, then quota', () => {
    it('refuses a request past the per-second rate, with the quota as it stands and nothing counted', async () => {
      nextWindow();
      const { principal, accountId } = await customer({ rate: 1 });
      const first = await service.search(principal, storedVin, undefined);
      expect(first.kind).toBe('found');
      const refused = await service.search(principal, storedVin, undefined);
      expect(refused).toMatchObject({ kind: 'rate_limited', limits: { rate: { allowed: false, limit: 1 }, quota: { limit: 100, used: 1 } } });
      expect(await used(accountId, refused)).toBe(1);
    });

    it('refuses a search past the monthly quota, uncounted, and counts the refusal in the metric', async () => {
      const { principal, accountId } = await customer({ quota: 1 });
      const rejectionsBefore = (await metrics.quotaRejections.get()).values[0]?.value ?? 0;
      expect((await service.search(principal, storedVin, undefined)).kind).toBe('found');
      nextWindow();
      const refused = await service.search(principal, storedVin, undefined);
      expect(refused).toMatchObject({ kind: 'quota_exceeded', limits: { quota: { limit: 1, used: 1 } } });
      expect(await used(accountId, refused)).toBe(1);
      expect((await metrics.quotaRejections.get()).values[0]?.value).toBe(rejectionsBefore + 1);
    });
  });

  describe('lookup and commit', () => {
    it('answers a known VIN with its lots and a report address, counted once', async () => {
      nextWindow();
      const { principal, accountId } = await customer();
      const outcome = await service.search(principal, storedVin, undefined);
      if (outcome.kind !== 'found') throw new Error(`expected found, got ${outcome.kind}`);
      expect(outcome.report).toMatchObject({ status: 'success', vin: storedVin });
      expect(outcome.report.lots).toHaveLength(1);
      expect(outcome.report.report_url).toMatch(new RegExp(`^${BASE_URL}/report/`));
      expect(outcome.limits.quota.used).toBe(1);
      expect(await used(accountId, outcome)).toBe(1);
    });

    it('answers an unknown VIN with not_found, counted as a search', async () => {
      const { principal, accountId } = await customer();
      const outcome = await service.search(principal, validVin('2HGFC2F59JH00001'), undefined);
      expect(outcome).toMatchObject({ kind: 'not_found', lot: null, replayed: false, limits: { quota: { used: 1 } } });
      expect(await used(accountId, outcome)).toBe(1);
    });

    it('looks a lot up by auction and id: its VIN, or not_found naming the lot', async () => {
      const { principal } = await customer();
      expect(await service.searchByLot(principal, 'Copart', '61000001', undefined)).toMatchObject({ kind: 'found', report: { vin: storedVin } });
      expect(await service.searchByLot(principal, 'copart', '61000999', undefined)).toMatchObject({
        kind: 'not_found',
        vin: 'copart/61000999',
        lot: { auction: 'copart', lotId: 61000999 },
      });
    });

    it('answers a key used for another subject with a conflict naming the first one', async () => {
      const { principal } = await customer();
      expect((await service.search(principal, storedVin, 'shared-key')).kind).toBe('found');
      expect(await service.searchByLot(principal, 'copart', '61000001', 'shared-key')).toEqual({ kind: 'idempotency_conflict', original: `VIN ${storedVin}` });
    });
  });

  describe('a principal that changed under the search', () => {
    it('answers unauthenticated when the token was revoked after it was read, and counts nothing', async () => {
      const { principal, accountId, tokenId } = await customer();
      expect(await t.repos.tokens.revokeForAccount(accountId, tokenId)).toBe(true);
      const outcome = await service.search(principal, storedVin, undefined);
      expect(outcome).toEqual({ kind: 'unauthenticated' });
      expect(await t.repos.usageCounters.usedInPeriod(accountId, new Date(principal.subscription!.startedAt).toISOString())).toBe(0);
    });

    it('answers subscription_required when the subscription was cancelled after it was read', async () => {
      const { principal, accountId } = await customer();
      expect(await t.repos.subscriptions.cancelActive(accountId)).toBe(1);
      expect(await service.search(principal, storedVin, undefined)).toEqual({ kind: 'subscription_required' });
    });
  });
});

/** What a report's snapshot stores when the photo archive is on (0025, docs/decisions.md). */
describe('SearchService with the photo archive: the report snapshot', () => {
  it('names versions while no photo is rewritten, and copies the lots the archive rewrote', async () => {
    const t = await createTestDatabase('sqlite');
    try {
      const metrics = new Metrics();
      const archived = 'https://img.example/archived.jpg';
      const service = new SearchService({
        repos: t.repos,
        principals: new ApiTokenService(t.repos, metrics),
        rateLimiter: new MemoryRateLimiter(),
        metrics,
        publicBaseUrl: BASE_URL,
        // An archive that holds a copy of this one photo.
        resolveImages: async (lots) => lots.map((lot) => ({ ...lot, images: lot.images.map((url) => (url === archived ? 'https://vinhistory.test/media/copy.jpg' : url)) })),
      });
      const plain = validVin('1FTFW1ET5DFC2020');
      const rewritten = validVin('1FTFW1ET5DFC3030');
      await t.repos.lots.upsertBatch([makeLot({ vin: plain, images: ['https://img.example/a.jpg'] }), makeLot({ vin: rewritten, images: [archived] })]);
      const { tokenId } = await createCustomer(t.repos, { quota: 100, rate: 100 });
      const principal = await principalAt(t.repos, tokenId, new Date());
      if (!canSearch(principal)) throw new Error('the customer cannot search');
      const snapshotOf = async (vin: string) => {
        const outcome = await service.search(principal, vin, undefined);
        if (outcome.kind !== 'found') throw new Error(`expected a report, got ${outcome.kind}`);
        const id = outcome.report.report_url.split('/').at(-1)!;
        return { stored: (await t.db.kysely.selectFrom('reports').select('lots').where('id', '=', id).executeTakeFirstOrThrow()).lots, answered: `[${outcome.report.lots.join(',')}]` };
      };
      const named = await snapshotOf(plain);
      expect(named.stored).toMatch(/^\{"versions":/);
      const copied = await snapshotOf(rewritten);
      expect(copied.stored).toBe(copied.answered);
      expect(copied.stored).toContain('https://vinhistory.test/media/copy.jpg');
    } finally {
      await t.destroy();
    }
  });
});
