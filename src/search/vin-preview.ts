import { checkVin } from '../domain/vin.ts';
import type { RateGuard } from '../limits/guards.ts';
import type { LotsRepository } from '../storage/repositories/lots-repository.ts';

/**
 * What a report for a VIN would hold, without the records themselves (those come from a search
 * with a token): the landing page's VIN check.
 */
export type VinPreviewOutcome =
  | { kind: 'invalid'; vin: string; messages: string[] }
  | { kind: 'rate_limited'; vin: string }
  | {
      kind: 'summary';
      vin: string;
      /** How many auction records are known. */
      found: number;
      /** The auctions they come from, in the order of their lots (newest sale first), each once. */
      auctions: string[];
      /** The newest known sale date, ISO 8601. */
      lastSale: string | null;
      photos: number;
    };

/** The VIN check of the landing page: free and anonymous, so guarded per network address. */
export class VinPreviewService {
  constructor(
    private readonly lots: LotsRepository,
    private readonly guard: RateGuard,
  ) {}

  async preview(rawVin: string, address: string): Promise<VinPreviewOutcome> {
    const check = checkVin(rawVin);
    if (!check.ok) return { kind: 'invalid', vin: rawVin.trim(), messages: check.errors };
    const rate = await this.guard.consume(address);
    if (!rate.allowed) return { kind: 'rate_limited', vin: check.vin };
    const lots = await this.lots.findByVin(check.vin);
    return {
      kind: 'summary',
      vin: check.vin,
      found: lots.length,
      auctions: [...new Set(lots.map((lot) => lot.auction))],
      lastSale: lots.find((lot) => lot.sale_date !== null)?.sale_date ?? null,
      photos: lots.reduce((sum, lot) => sum + lot.images.length, 0),
    };
  }
}
