import { parseLotInput, type LotRef } from '../domain/lot-ref.ts';
import { checkVin } from '../domain/vin.ts';
import type { RateGuard } from '../limits/guards.ts';
import type { LotsRepository } from '../storage/repositories/lots-repository.ts';

/**
 * What a report for a vehicle would hold, without the records themselves (those come from a search
 * with a token): the landing page's check. It takes a VIN, a lot number, or a Copart or IAAI lot
 * link, because buyers arrive with a lot link (auctions mask the VIN's last digits for anonymous
 * visitors).
 */
export type VinPreviewOutcome =
  | { kind: 'invalid'; vin: string; messages: string[] }
  | { kind: 'rate_limited'; vin: string }
  /** A well-formed lot number or link, but no such lot is known (`auction` null: a bare number, looked up at every auction). */
  | { kind: 'lot_not_found'; input: string; auction: string | null; lotId: number }
  | {
      kind: 'summary';
      vin: string;
      /** The lot the check was asked for, when it was asked by lot. */
      lot: LotRef | null;
      /** How many auction records are known. */
      found: number;
      /** The auctions they come from, in the order of their lots (newest sale first), each once. */
      auctions: string[];
      /** The newest known sale date, ISO 8601. */
      lastSale: string | null;
      photos: number;
    };

/** Looks like a link or a domain: worth a message about lot links rather than about VIN length. */
const LINKISH = /^[a-z][a-z0-9+.-]*:\/\/|^[^\s/]+\.[a-z]{2,}\//i;

/** The VIN check of the landing page: free and anonymous, so guarded per network address. */
export class VinPreviewService {
  constructor(
    private readonly lots: LotsRepository,
    private readonly guard: RateGuard,
  ) {}

  async preview(raw: string, address: string): Promise<VinPreviewOutcome> {
    const input = raw.trim();
    const lotInput = parseLotInput(input);
    if (lotInput === null) {
      if (LINKISH.test(input)) {
        return { kind: 'invalid', vin: input, messages: ['That link is not a Copart or IAAI lot page. Paste a VIN, a lot number, or the link of a lot.'] };
      }
      const check = checkVin(input);
      if (!check.ok) return { kind: 'invalid', vin: input, messages: check.errors };
      if (!(await this.guard.consume(address)).allowed) return { kind: 'rate_limited', vin: check.vin };
      return this.summary(check.vin, null);
    }

    if (!(await this.guard.consume(address)).allowed) return { kind: 'rate_limited', vin: input };
    // A bare number may be a lot at any auction: one primary-key probe per auction (a handful).
    const auctions = lotInput.auction !== null ? [lotInput.auction] : await this.lots.auctions();
    for (const auction of auctions) {
      const vin = await this.lots.vinOfLotId(auction, lotInput.lotId);
      if (vin !== null) return this.summary(vin, { auction, lotId: lotInput.lotId });
    }
    return { kind: 'lot_not_found', input, auction: lotInput.auction, lotId: lotInput.lotId };
  }

  private async summary(vin: string, lot: LotRef | null): Promise<VinPreviewOutcome> {
    const lots = await this.lots.findByVin(vin);
    return {
      kind: 'summary',
      vin,
      lot,
      found: lots.length,
      auctions: [...new Set(lots.map((item) => item.auction))],
      lastSale: lots.find((item) => item.sale_date !== null)?.sale_date ?? null,
      photos: lots.reduce((sum, item) => sum + item.images.length, 0),
    };
  }
}
