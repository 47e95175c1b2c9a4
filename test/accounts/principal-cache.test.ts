import { describe, expect, it } from 'vitest';
import { PrincipalCache } from '../../src/accounts/principal-cache.ts';
import type { TokenPrincipal } from '../../src/domain/principal.ts';

/** A clock the test moves by hand. */
function manualClock(start = 1_000_000): { now: () => number; advance(ms: number): void } {
  let at = start;
  return { now: () => at, advance: (ms) => (at += ms) };
}

function principal(tokenId: string, overrides: Partial<TokenPrincipal> = {}): TokenPrincipal {
  return {
    tokenId,
    accountId: `acc_${tokenId}`,
    lastUsedAt: null,
    sandbox: false,
    reportBaseUrl: null,
    subscription: {
      id: `sub_${tokenId}`,
      startedAt: '2026-03-01T00:00:00.000Z',
      billing: 'monthly',
      planCode: 'standard',
      planName: 'Standard',
      monthlyQuota: 1000,
      ratePerSecond: 2,
    },
    ...overrides,
  };
}

describe('PrincipalCache', () => {
  it('serves a principal until its time to live has passed, then forgets it', () => {
    const clock = manualClock();
    const cache = new PrincipalCache(60_000, 10, clock.now);
    const alice = principal('tok_a');
    cache.set('hash-a', alice);
    expect(cache.get('hash-a')).toEqual(alice);
    clock.advance(59_999);
    expect(cache.get('hash-a')).toEqual(alice);
    clock.advance(1);
    expect(cache.get('hash-a')).toBeNull();
    // Expiry drops the entry itself, not only the answer, and with it the token's way back to it.
    expect(cache.size).toBe(0);
    cache.replace('tok_a', principal('tok_a', { lastUsedAt: 'x' }));
    expect(cache.get('hash-a')).toBeNull();
  });

  it('never answers for a hash it was not given', () => {
    const cache = new PrincipalCache(60_000, 10, manualClock().now);
    cache.set('hash-a', principal('tok_a'));
    expect(cache.get('hash-b')).toBeNull();
  });

  it('storing a hash again restarts its time to live', () => {
    const clock = manualClock();
    const cache = new PrincipalCache(1_000, 10, clock.now);
    cache.set('hash-a', principal('tok_a'));
    clock.advance(900);
    cache.set('hash-a', principal('tok_a', { lastUsedAt: '2026-03-10T00:00:00.000Z' }));
    clock.advance(900);
    expect(cache.get('hash-a')?.lastUsedAt).toBe('2026-03-10T00:00:00.000Z');
    expect(cache.size).toBe(1);
  });

  it('holds at most its bound, dropping the least recently stored first', () => {
    const clock = manualClock();
    const cache = new PrincipalCache(60_000, 3, clock.now);
    for (const name of ['a', 'b', 'c']) cache.set(`hash-${name}`, principal(`tok_${name}`));
    // Storing `a` again makes it the newest: `b` is now the oldest.
    cache.set('hash-a', principal('tok_a'));
    expect(cache.size).toBe(3);
    cache.set('hash-d', principal('tok_d'));
    expect(cache.size).toBe(3);
    expect(cache.get('hash-b')).toBeNull();
    for (const name of ['a', 'c', 'd']) expect(cache.get(`hash-${name}`)?.tokenId).toBe(`tok_${name}`);
    // The evicted token is gone for `replace` too: a fresh read is not stored under its old hash.
    cache.replace('tok_b', principal('tok_b'));
    expect(cache.get('hash-b')).toBeNull();
    expect(cache.size).toBe(3);
  });

  it('a principal read afresh (replace) counts as stored now, for the time to live', () => {
    const clock = manualClock();
    const cache = new PrincipalCache(1_000, 10, clock.now);
    cache.set('hash-a', principal('tok_a'));
    cache.set('hash-b', principal('tok_b'));
    clock.advance(900);
    const fresh = principal('tok_a', { subscription: { ...principal('tok_a').subscription!, monthlyQuota: 5 } });
    cache.replace('tok_a', fresh);
    clock.advance(900);
    // `b`, stored 1.8 s ago, has expired; `a`, replaced 0.9 s ago, has not.
    expect(cache.get('hash-b')).toBeNull();
    expect(cache.get('hash-a')).toEqual(fresh);
  });

  it('a principal read afresh (replace) counts as stored now for the bound too', () => {
    const cache = new PrincipalCache(60_000, 2, manualClock().now);
    cache.set('hash-a', principal('tok_a'));
    cache.set('hash-b', principal('tok_b'));
    cache.replace('tok_a', principal('tok_a', { lastUsedAt: '2026-03-10T00:00:00.000Z' }));
    // `b` is now the least recently stored: a new entry pushes it out, not `a`.
    cache.set('hash-c', principal('tok_c'));
    expect(cache.get('hash-b')).toBeNull();
    expect(cache.get('hash-a')?.lastUsedAt).toBe('2026-03-10T00:00:00.000Z');
    expect(cache.get('hash-c')?.tokenId).toBe('tok_c');
  });

  it('replace with null (the token is no longer live) drops the entry at once', () => {
    const cache = new PrincipalCache(60_000, 10, manualClock().now);
    cache.set('hash-a', principal('tok_a'));
    cache.set('hash-b', principal('tok_b'));
    cache.replace('tok_a', null);
    expect(cache.get('hash-a')).toBeNull();
    expect(cache.get('hash-b')?.tokenId).toBe('tok_b');
    expect(cache.size).toBe(1);
    // Nothing left to replace: a later fresh read of the same token stores nothing by itself.
    cache.replace('tok_a', principal('tok_a'));
    expect(cache.get('hash-a')).toBeNull();
  });

  it('replace of a token it never held stores nothing', () => {
    const cache = new PrincipalCache(60_000, 10, manualClock().now);
    cache.replace('tok_x', principal('tok_x'));
    expect(cache.size).toBe(0);
  });

  it('keeps no principal that cannot search: a 402 is always read afresh, so a plan bought meanwhile is seen at once', () => {
    const cache = new PrincipalCache(60_000, 10, manualClock().now);
    cache.set('hash-a', principal('tok_a', { subscription: null }));
    expect(cache.get('hash-a')).toBeNull();
    expect(cache.size).toBe(0);
    // A subscription that ended, found by a commit's re-check and read afresh: dropped, not kept as a 402.
    cache.set('hash-b', principal('tok_b'));
    cache.replace('tok_b', principal('tok_b', { subscription: null }));
    expect(cache.get('hash-b')).toBeNull();
    expect(cache.size).toBe(0);
    // A sandbox token searches without a plan: it is kept.
    const sandbox = principal('tok_s', { sandbox: true, subscription: null });
    cache.set('hash-s', sandbox);
    expect(cache.get('hash-s')).toEqual(sandbox);
  });

  it('touched keeps the last-use time current without restarting the time to live', () => {
    const clock = manualClock();
    const cache = new PrincipalCache(1_000, 10, clock.now);
    const alice = principal('tok_a');
    cache.set('hash-a', alice);
    clock.advance(500);
    cache.touched('tok_a', '2026-03-10T12:00:00.000Z');
    expect(cache.get('hash-a')).toEqual({ ...alice, lastUsedAt: '2026-03-10T12:00:00.000Z' });
    // The object handed out earlier is not changed under its holder.
    expect(alice.lastUsedAt).toBeNull();
    clock.advance(500);
    expect(cache.get('hash-a')).toBeNull();
    // A token it does not hold: nothing happens.
    cache.touched('tok_unknown', '2026-03-10T12:00:00.000Z');
    expect(cache.size).toBe(0);
  });
});
