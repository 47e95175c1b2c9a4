/**
 * Formatting for the report page. Values are US auction data: money in whole US dollars, odometer
 * readings in miles, dates in UTC. The page is read worldwide, so the format is fixed (en-US,
 * UTC) rather than taken from the reader's Accept-Language: a shared link must read the same to
 * everyone it is sent to.
 */

const dollars = new Intl.NumberFormat('en-US', {
  style: 'currency',
  currency: 'USD',
  minimumFractionDigits: 0,
  maximumFractionDigits: 0,
});
const integer = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
const calendarDate = new Intl.DateTimeFormat('en-US', { timeZone: 'UTC', year: 'numeric', month: 'short', day: 'numeric' });
const clockTime = new Intl.DateTimeFormat('en-GB', { timeZone: 'UTC', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });

/** `$12,345`; null stays null so that the template decides how to show an unknown value. */
export function formatMoney(amount: number | null): string | null {
  return amount === null ? null : dollars.format(amount);
}

/** `172,691 mi`. */
export function formatMiles(miles: number | null): string | null {
  return miles === null ? null : `${integer.format(miles)} mi`;
}

export function formatInteger(value: number | null): string | null {
  return value === null ? null : integer.format(value);
}

function parseInstant(iso: string | null): Date | null {
  if (iso === null) return null;
  const time = Date.parse(iso);
  return Number.isNaN(time) ? null : new Date(time);
}

/**
 * `Mar 12, 2024`. Sale times are left out: feeds disagree on them (midnight placeholders, local
 * yard time stored as UTC), while the day is what a buyer compares. A value that is not a date
 * is shown as given rather than hidden.
 */
export function formatDate(iso: string | null): string | null {
  if (iso === null) return null;
  const date = parseInstant(iso);
  return date ? calendarDate.format(date) : iso;
}

/** `Nov 21, 2026 at 07:55 UTC`, for the moment a report was made. */
export function formatDateTime(iso: string): string {
  const date = parseInstant(iso);
  return date ? `${calendarDate.format(date)} at ${clockTime.format(date)} UTC` : iso;
}

/** The machine-readable form for `<time datetime>`, or null when the value is not a date. */
export function isoInstant(iso: string | null): string | null {
  return parseInstant(iso)?.toISOString() ?? null;
}

const AUCTION_NAMES: Record<string, string> = {
  copart: 'Copart',
  iaai: 'IAAI',
  manheim: 'Manheim',
  adesa: 'ADESA',
  acv: 'ACV Auctions',
};

/** Auction codes are lower-case words (`copart`, `iaai`); people know them by their brand names. */
export function formatAuction(code: string): string {
  const known = AUCTION_NAMES[code];
  if (known) return known;
  return code
    .split(/[-_]+/)
    .filter((word) => word.length > 0)
    .map((word) => word[0]!.toUpperCase() + word.slice(1))
    .join(' ');
}

/** Feed text arrives with stray and doubled spaces (`"4.6L  8"`); blank means unknown. */
export function cleanText(value: string | null): string | null {
  if (value === null) return null;
  const text = value.replace(/\s+/g, ' ').trim();
  return text === '' ? null : text;
}
