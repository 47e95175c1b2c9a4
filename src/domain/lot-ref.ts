import { MAX_INTEGER } from './lot.ts';

/**
 * A lot named by its auction and its id at that auction (`copart`, 12345678): what the lookup by
 * lot takes, and what the landing page's box understands in a lot number or a lot link.
 */
export interface LotRef {
  auction: string;
  lotId: number;
}

/** The auction word as lots store it (domain/lot.ts): lower-case letters, digits, - and _. */
const AUCTION_WORD = /^[a-z][a-z0-9_-]{0,39}$/;

export function normaliseAuction(raw: string): string {
  return raw.trim().toLowerCase();
}

export type AuctionCheck = { ok: true; auction: string } | { ok: false; errors: string[] };

/** The word's form, and whether it is one of the auctions the service holds lots from. */
export function checkAuction(raw: string, known: readonly string[]): AuctionCheck {
  const auction = normaliseAuction(raw);
  const list = known.length > 0 ? known.join(', ') : 'none yet';
  if (!AUCTION_WORD.test(auction)) {
    return { ok: false, errors: [`The auction must be a lower-case word such as copart or iaai; known auctions: ${list}.`] };
  }
  if (!known.includes(auction)) return { ok: false, errors: [`Unknown auction ${auction}; known auctions: ${list}.`] };
  return { ok: true, auction };
}

export type LotIdCheck = { ok: true; lotId: number } | { ok: false; errors: string[] };

/** A positive integer of at most ten digits that fits the stored column (surrounding spaces ignored). */
export function checkLotId(raw: string): LotIdCheck {
  const text = raw.trim();
  if (!/^\d{1,10}$/.test(text)) {
    return { ok: false, errors: [`The lot_id must be a positive whole number of at most 10 digits; got "${text.slice(0, 20)}".`] };
  }
  const lotId = Number(text);
  if (lotId < 1 || lotId > MAX_INTEGER) return { ok: false, errors: [`The lot_id must be from 1 to ${MAX_INTEGER}; got ${text}.`] };
  return { ok: true, lotId };
}

/** How a lookup by lot is named where a VIN would be: an Idempotency-Key's subject, an unknown lot's search record. */
export function lotSubject(lot: LotRef): string {
  return `${lot.auction}/${lot.lotId}`;
}

/** The auctions' own sites (their national ones too); nothing is fetched, but a look-alike host is not theirs. */
const COPART_HOST = /(^|\.)copart\.(com|ca|co\.uk|de|es|ie|fi|ae|bh|om|com\.br|com\.mx)$/;
const IAAI_HOST = /(^|\.)iaai\.(com|ca)$/;

/**
 * A lot number (`12345678`, auction unknown) or a Copart or IAAI lot link pasted into the landing
 * page's box, e.g. https://www.copart.com/lot/12345678/clean-title-... or
 * https://www.iaai.com/VehicleDetail/12345678~US. Null for anything else (a VIN, say).
 */
export function parseLotInput(input: string): { auction: string | null; lotId: number } | null {
  const text = input.trim();
  if (/^\d{1,10}$/.test(text)) {
    const check = checkLotId(text);
    return check.ok ? { auction: null, lotId: check.lotId } : null;
  }
  let url: URL;
  try {
    url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `https://${text}`);
  } catch {
    return null;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return null;
  const host = url.hostname.toLowerCase();
  const path = url.pathname;
  let match: RegExpExecArray | null = null;
  let auction: string | null = null;
  if (COPART_HOST.test(host)) {
    match = /^\/(?:[a-z]{2}\/)?lot\/(\d{1,10})(?:[/~?#]|$)/i.exec(path);
    auction = 'copart';
  } else if (IAAI_HOST.test(host)) {
    match = /^\/vehicledetail\/(\d{1,10})(?:[~/?#]|$)/i.exec(path);
    auction = 'iaai';
  }
  if (!match) return null;
  const check = checkLotId(match[1]!);
  return check.ok ? { auction, lotId: check.lotId } : null;
}
