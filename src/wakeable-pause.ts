/**
 * The pause of a background loop between two polls, ended early by wake(): work was just queued, a
 * place came free, or the loop is stopping. The webhook and mail delivery workers and the batch
 * runner share it.
 */
export class WakeablePause {
  private wakeUp: (() => void) | null = null;

  /**
   * `holdsProcess`: whether the pause's timer keeps the process up. The server's socket does that
   * for its workers; a command that runs only the worker (`vinhistory deliver`) needs the timer.
   */
  constructor(private readonly options: { holdsProcess: boolean }) {}

  /** Waits `ms`, or until wake(). */
  for(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wakeUp = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      if (!this.options.holdsProcess) timer.unref();
      this.wakeUp = done;
    });
  }

  /** Ends the pause under way, if any. */
  wake(): void {
    this.wakeUp?.();
  }
}
