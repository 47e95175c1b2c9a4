import { describe, expect, it } from 'vitest';
import { WriteSlices } from '../../../src/ingest/worker/write-slices.ts';

describe("a pull's batch in slices while the server's writers come", () => {
  const policy = { sliceMs: 1, maxYieldMs: 5, quietMs: 200 };

  function slicer(entries: { n: number }, clock: { t: number }) {
    return new WriteSlices(policy, () => entries.n, () => clock.t);
  }

  it('writes a whole batch while no priority writer entered the gate', () => {
    const entries = { n: 7 };
    const clock = { t: 1000 };
    const slices = slicer(entries, clock);
    expect(slices.next(250)).toBe(250);
    slices.held(250, 25);
    expect(slices.next(250)).toBe(250);
  });

  it('sizes a slice from the measured lock time a lot, and returns to whole batches once the writers stop', () => {
    const entries = { n: 0 };
    const clock = { t: 1000 };
    const slices = slicer(entries, clock);
    entries.n++;
    // Nothing measured yet: a small first slice.
    expect(slices.next(250)).toBe(8);
    slices.held(8, 0.8); // 0.1 ms a lot
    expect(slices.next(242)).toBe(10);
    expect(slices.next(4)).toBe(4);
    // One slow transaction (preempted) does not shrink them; slower lots throughout do, never to none.
    slices.held(1, 50);
    expect(slices.next(200)).toBe(10);
    for (let i = 0; i < 16; i++) slices.held(1, 50);
    expect(slices.next(200)).toBe(1);
    // No entry for longer than quietMs: whole batches again.
    clock.t += 201;
    expect(slices.next(200)).toBe(200);
    entries.n++;
    expect(slices.next(200)).toBeLessThan(200);
  });

  it('never slices with a budget of 0', () => {
    const entries = { n: 0 };
    const slices = new WriteSlices({ ...policy, sliceMs: 0 }, () => entries.n, () => 0);
    entries.n++;
    expect(slices.next(250)).toBe(250);
  });
});
