import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MarketOptions, MarketSubject, MarketValue } from '../../src/domain/market.ts';
import { RateGuard } from '../../src/limits/guards.ts';
import { MemoryRateLimiter } from '../../src/limits/rate/memory-rate-limiter.ts';
import { MARKET_LOOKS_PER_ADDRESS, MarketLookService, type MarketValues } from '../../src/market/market-looks.ts';
import { createTestDatabase, type TestDatabase } from '../support/databases.ts';

/**
 * The free looks' guards and bounds alone: the figures are the market service's (tested with it,
 * and through the Market page in test/web/site/market.test.ts), so a recorder stands in for it here.
 */
class RecordingMarket implements MarketValues {
  readonly calls: { subject: MarketSubject; options: MarketOptions }[] = [];
  fail = false;
  async valueFor(subject: MarketSubject, options: MarketOptions): Promise<MarketValue | null> {
    this.calls.push({ subject, options });
    if (this.fail) throw new Error('database gone');
    const vehicle = subject.kind === 'vehicle' ? { make: subject.make, model: subject.model, year: subject.year } : { make: '', model: '', year: 0 };
    return {
      vehicle,
      window: { from: '2025-11-26T00:00:00.000Z', to: options.asOf.toISOString() },
      comparables: { count: 0, price: { min: null, p25: null, median: null, p75: null, max: null }, share_of_retail_value: { median: null } },
      by_damage: [],
      by_month: [],
      closest: [],
    };
  }
}

describe('MarketLookService (SQLite: the throttle has no dialect code)', () => {
  let database: TestDatabase;
  let market: RecordingMarket;
  let clock = 0;
  let looks: MarketLookService;
  const ask = { make: ' Honda ', model: 'Accord', year: '2020', primaryDamage: '' };
  const noon = new Date('2026-11-26T12:00:00.000Z');

  beforeAll(async () => {
    database = await createTestDatabase('sqlite');
    market = new RecordingMarket();
    // The landing page's guard, on a clock the test moves.
    looks = new MarketLookService(market, new RateGuard(new MemoryRateLimiter(() => clock), 'vin-preview', 2), database.repos.authAttempts);
  });
  afterAll(async () => database?.destroy());

  it('names every empty field at once, holds what is filled in to the API\'s rules, before any guard or query', async () => {
    expect(await looks.look({ make: ' ', model: '', year: '', primaryDamage: 'x' }, '198.51.100.1', noon)).toEqual({
      kind: 'invalid',
      errors: { make: 'Enter the make.', model: 'Enter the model.', year: 'Enter the model year.' },
    });
    // The API's own words (market-query.ts), one field at a time as the API answers them.
    expect(await looks.look({ ...ask, model: 'x'.repeat(101) }, '198.51.100.1', noon)).toEqual({ kind: 'invalid', errors: { model: 'The model must be at most 100 characters.' } });
    expect(await looks.look({ ...ask, year: '20x0' }, '198.51.100.1', noon)).toEqual({ kind: 'invalid', errors: { year: 'The year must be a whole number from 1886 to 2100.' } });
    expect(await looks.look({ ...ask, primaryDamage: '***' }, '198.51.100.1', noon)).toEqual({ kind: 'invalid', errors: { primary_damage: 'The primary_damage must contain a letter or a digit.' } });
    expect(market.calls).toHaveLength(0);
  });

  it('asks the market for the vehicle over the 12 months to now, trimmed, with the damage when given', async () => {
    const outcome = await looks.look({ ...ask, primaryDamage: ' front end ' }, '198.51.100.2', noon);
    expect(outcome).toMatchObject({ kind: 'value', subject: { make: 'Honda', model: 'Accord', year: 2020, primaryDamage: 'front end' } });
    expect(market.calls.at(-1)).toEqual({ subject: { kind: 'vehicle', make: 'Honda', model: 'Accord', year: 2020 }, options: { primaryDamage: 'front end', months: 12, asOf: noon } });
  });

  it('holds a network address to the VIN check\'s rate a second, then to the free looks of a day', async () => {
    const address = '198.51.100.3';
    clock += 10_000;
    const burst = await Promise.all([1, 2, 3].map(() => looks.look(ask, address, noon)));
    expect(burst.map((outcome) => outcome.kind).sort()).toEqual(['rate_limited', 'value', 'value']);
    for (let i = 2; i < MARKET_LOOKS_PER_ADDRESS.limit; i++) {
      clock += 1000;
      expect((await looks.look(ask, address, new Date(noon.getTime() + i * 60_000))).kind).toBe('value');
    }
    clock += 1000;
    const refused = await looks.look(ask, address, new Date(noon.getTime() + 3_600_000));
    expect(refused).toMatchObject({ kind: 'no_looks_left', perDay: 5 });
    // The first look of the day frees up 24 hours after it, 23 hours after this refusal.
    expect((refused as { retryAfterMs: number }).retryAfterMs).toBe(23 * 3_600_000);
    // Another address has its own looks; and a day later this one has them again.
    clock += 1000;
    expect((await looks.look(ask, '198.51.100.4', noon)).kind).toBe('value');
    clock += 1000;
    expect((await looks.look(ask, address, new Date(noon.getTime() + 24 * 3_600_000 + 1))).kind).toBe('value');
  });

  it('gives a look back when the market could not answer it', async () => {
    const address = '198.51.100.5';
    market.fail = true;
    for (let i = 0; i < MARKET_LOOKS_PER_ADDRESS.limit + 1; i++) {
      clock += 1000;
      await expect(looks.look(ask, address, noon)).rejects.toThrow('database gone');
    }
    market.fail = false;
    clock += 1000;
    expect((await looks.look(ask, address, noon)).kind).toBe('value');
  });
});
