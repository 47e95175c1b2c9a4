import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { createGuards } from '../../src/limits/guards.ts';
import { MemoryRateLimiter } from '../../src/limits/rate/memory-rate-limiter.ts';

describe('the guards of the free calls', () => {
  let limiter: MemoryRateLimiter;
  beforeEach(() => {
    limiter = new MemoryRateLimiter();
  });
  afterEach(() => limiter.close());

  const allowedOf = async (consume: () => Promise<{ allowed: boolean }>, times: number) => {
    const decisions = await Promise.all(Array.from({ length: times }, consume));
    return decisions.filter((decision) => decision.allowed).length;
  };

  test('usage calls: 5 a second per account, apart from the account\'s search rate and from other accounts', async () => {
    const { usageCalls } = createGuards(limiter);
    expect(usageCalls.perSecond).toBe(5);
    expect(await allowedOf(() => usageCalls.consume('acct_a'), 8)).toBe(5);
    expect(await allowedOf(() => usageCalls.consume('acct_b'), 1)).toBe(1);
    // The search rate is keyed by the bare account id: the usage calls took nothing from it.
    expect(await allowedOf(() => limiter.consume('acct_a', 1), 1)).toBe(1);
  });

  test('VIN previews: 2 a second per address, apart from the usage calls', async () => {
    const { usageCalls, vinPreviews } = createGuards(limiter);
    expect(vinPreviews.perSecond).toBe(2);
    expect(await allowedOf(() => vinPreviews.consume('192.0.2.1'), 4)).toBe(2);
    expect(await allowedOf(() => vinPreviews.consume('192.0.2.2'), 1)).toBe(1);
    expect(await allowedOf(() => usageCalls.consume('192.0.2.1'), 1)).toBe(1);
  });
});
