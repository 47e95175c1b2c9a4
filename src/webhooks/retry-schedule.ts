/** The first retry waits about this long; each later one twice the one before. */
export const FIRST_RETRY_MS = 30_000;
/** No wait between two attempts is longer than this. */
export const LONGEST_RETRY_MS = 6 * 60 * 60 * 1000;
/** How long an event is retried: 72 hours from its creation (or its resend). */
export const DELIVERY_WINDOW_MS = 72 * 60 * 60 * 1000;
/**
 * An endpoint whose attempts have all failed for this long is disabled (and its owner told): as
 * long as an event is retried, so that an endpoint is given up no sooner than its events are.
 */
export const DISABLE_AFTER_FAILING_MS = DELIVERY_WINDOW_MS;

/** When an event made (or resent) at `at` is given up: ISO. */
export function giveUpAtFor(at: Date): string {
  return new Date(at.getTime() + DELIVERY_WINDOW_MS).toISOString();
}

/**
 * The wait after the `attempts`-th failed attempt: exponential (30 s, 1 min, 2 min, ... up to
 * 6 h) with "equal jitter": half the wait fixed, half random, so that the retries of many events
 * that failed together (an endpoint back from an outage) do not all arrive at the same moment.
 * About 20 attempts fit in the 72 hours an event is retried.
 */
export function retryDelayMs(attempts: number, random: () => number = Math.random): number {
  const exponent = Math.min(Math.max(attempts - 1, 0), 30);
  const full = Math.min(FIRST_RETRY_MS * 2 ** exponent, LONGEST_RETRY_MS);
  return Math.round(full / 2 + random() * (full / 2));
}
