/**
 * How many of a batch's lots the pull's storing thread writes in its next transaction (SQLite).
 *
 * A search's commit waits at the process's write gate for the pull's transaction in hand
 * (storage/dialects/sqlite/write-gate.ts): a batch of 250 lots held it 28 ms on a 200,000-lot
 * database. While the server's writers come (the gate's priority entries move), the batch is
 * written in slices of about `sliceMs` of lock each, sized from the measured lock time per lot of
 * the transactions before (the least of the last 16: the fixed cost of a transaction included, so
 * that a slice converges on its budget; the least, because a slice preempted on a busy machine
 * only ever looks slower, and an average of those shrank the slices to 2-3 lots), and the gate is
 * left between two slices for any waiting search to commit. A feed's pull also slices while the
 * server's counted requests come (their count moves: worker-threads.ts, GiveWay), so that the
 * thread looks whether to give way to them every slice. With no priority writer and no request for
 * `quietMs`, a batch is one transaction, as the CLI import's are: a pull alone runs at the import's rate.
 *
 * The pull yields to waiting writers at most `maxYieldMs` before each transaction, then takes the
 * gate as soon as its holder leaves: searches back to back would otherwise keep it out for good
 * (its floor: a slice every `maxYieldMs` or so).
 *
 * Each slice is a whole upsert (its lots, versions, sightings and hooks in one transaction), so a
 * process killed between two slices leaves the slices before it stored and nothing of the rest: a
 * re-run of the pull stores the rest and finds the stored ones unchanged.
 */
export interface SlicePolicy {
  /** Lock time a slice aims at, ms; 0: never slice. */
  sliceMs: number;
  /** The longest the pull waits at the gate for waiting writers before it goes first, ms. */
  maxYieldMs: number;
  /** Priority entries this recent make the next transaction a slice, ms. */
  quietMs: number;
}

/** The pull's floor: it yields to waiting writers this long at most before a transaction. */
const MAX_YIELD_MS = 5;
/** Searches this recent (the gate's priority entries) make the next transaction a slice. */
const QUIET_MS = 200;

export function slicePolicy(sliceMs: number): SlicePolicy {
  return { sliceMs, maxYieldMs: MAX_YIELD_MS, quietMs: QUIET_MS };
}

/** A first slice, before any transaction was measured: a batch of 250 took 28 ms at 200,000 lots. */
const FIRST_SLICE = 8;

/** How many of the last transactions' lock time per lot the size is taken from (the least). */
const WINDOW = 16;

export class WriteSlices {
  private readonly perLot: number[] = [];
  private entries: number;
  private movedAt = -Infinity;

  constructor(
    private readonly policy: SlicePolicy,
    /** The gate's priority entries so far (WriteGate.priorityEntries). */
    private readonly priorityEntries: () => number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.entries = priorityEntries();
  }

  /** Lots for the next transaction, of `remaining` left in the batch (at least one). */
  next(remaining: number): number {
    const entries = this.priorityEntries();
    const now = this.now();
    if (entries !== this.entries) {
      this.entries = entries;
      this.movedAt = now;
    }
    if (this.policy.sliceMs <= 0 || now - this.movedAt > this.policy.quietMs) return remaining;
    if (this.perLot.length === 0) return Math.min(remaining, FIRST_SLICE);
    return Math.max(1, Math.min(remaining, Math.floor(this.policy.sliceMs / Math.min(...this.perLot))));
  }

  /** A transaction of `lots` lots held the lock `ms`. */
  held(lots: number, ms: number): void {
    if (this.perLot.length === WINDOW) this.perLot.shift();
    this.perLot.push(ms / lots);
  }
}
