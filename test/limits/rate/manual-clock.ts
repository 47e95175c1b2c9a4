import type { Clock } from '../../../src/limits/rate/clock.ts';

/** A clock that moves only when the test says so, firing the timers that fall due on the way. */
export class ManualClock implements Clock {
  private time = 0;
  private timers: { at: number; fn: () => void }[] = [];

  now = (): number => this.time;

  after = (ms: number, fn: () => void): (() => void) => {
    const timer = { at: this.time + ms, fn };
    this.timers.push(timer);
    return () => {
      this.timers = this.timers.filter((t) => t !== timer);
    };
  };

  /** Moves to `moment`, running every timer due by then in order, each at its own time. */
  advanceTo(moment: number): void {
    for (;;) {
      const due = this.timers.filter((t) => t.at <= moment).sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      this.timers = this.timers.filter((t) => t !== due);
      this.time = Math.max(this.time, due.at);
      due.fn();
    }
    this.time = Math.max(this.time, moment);
  }

  advance(ms: number): void {
    this.advanceTo(this.time + ms);
  }

  get pendingTimers(): number {
    return this.timers.length;
  }
}
