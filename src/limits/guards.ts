import type { RateDecision, RateLimiter } from './rate/rate-limiter.ts';

/**
 * A per-second limit on a free call, apart from the plans' search rates: it keeps a loop or a
 * crawler from loading the service. Its keys are prefixed with its name, so that it never shares
 * a window with a search rate or another guard.
 */
export class RateGuard {
  constructor(
    private readonly limiter: RateLimiter,
    private readonly name: string,
    readonly perSecond: number,
  ) {}

  consume(subject: string): Promise<RateDecision> {
    return this.limiter.consume(`${this.name}:${subject}`, this.perSecond);
  }
}

/** The guards of the free calls, by what they guard. */
export interface Guards {
  /** GET /api/v1/usage, per account: usage is free, but a loop calling it must not load the service. */
  usageCalls: RateGuard;
  /** The landing page's VIN check, per network address: the box is for people, not for crawlers. */
  vinPreviews: RateGuard;
  /**
   * Report PDFs printed anew (not served from the cache), per network address: a print takes a
   * browser tab and a core for about a second, and the reports are free to anyone with the link.
   */
  pdfPrints: RateGuard;
  /**
   * Verifiable reports, per network address: a report's signed JSON, the JWK Set and the /verify
   * page's checks (a PDF upload is parsed), all free to anyone.
   */
  reportVerifications: RateGuard;
}

export function createGuards(limiter: RateLimiter): Guards {
  return {
    usageCalls: new RateGuard(limiter, 'usage', 5),
    vinPreviews: new RateGuard(limiter, 'vin-preview', 2),
    pdfPrints: new RateGuard(limiter, 'pdf-print', 2),
    reportVerifications: new RateGuard(limiter, 'report-verification', 10),
  };
}
