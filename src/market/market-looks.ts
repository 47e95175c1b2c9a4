import { addressSubject, Throttle, type ThrottleRule } from '../accounts/throttle.ts';
import type { MarketOptions, MarketSubject, MarketValue } from '../domain/market.ts';
import type { RateGuard } from '../limits/guards.ts';
import type { AuthAttemptsRepository } from '../storage/repositories/auth-attempts-repository.ts';

/** What a free look needs of the market: the figures for a vehicle, as the API computes them. */
export interface MarketValues {
  valueFor(subject: MarketSubject, options: MarketOptions): Promise<MarketValue | null>;
}

/**
 * Free looks a day per network address, over a sliding 24 hours in the database, so that every
 * instance counts them together. A look costs what a counted market call costs; the free ones are
 * a taste of the API, not a way around it.
 */
export const MARKET_LOOKS_PER_ADDRESS: ThrottleRule = { kind: 'market_look', limit: 5, windowMs: 24 * 60 * 60 * 1000 };

/** The bounds of what a visitor types, the API's own (docs/api.md, GET /api/v1/market). */
export const MARKET_LOOK_BOUNDS = { text: 60, yearMin: 1900 } as const;

export interface MarketLookQuery {
  make: string;
  model: string;
  year: string;
  primaryDamage: string;
}

export type MarketLookOutcome =
  /** By field (make, model, year, primary_damage): what is wrong with it. */
  | { kind: 'invalid'; errors: Record<string, string> }
  /** More looks in one second than the landing page's VIN check allows (the same guard, shared). */
  | { kind: 'rate_limited'; retryAfterMs: number }
  /** The day's free looks are used up. */
  | { kind: 'no_looks_left'; retryAfterMs: number; perDay: number }
  | { kind: 'value'; value: MarketValue; subject: { make: string; model: string; year: number; primaryDamage: string | null } };

const PRINTABLE = /^[\p{L}\p{N}][\p{L}\p{N} .,&'/()+-]*$/u;

function checkText(raw: string, what: string, required: boolean): { value: string | null; error: string | null } {
  const value = raw.trim().replace(/\s+/g, ' ');
  if (value === '') return required ? { value: null, error: `Enter the ${what}.` } : { value: null, error: null };
  if (value.length > MARKET_LOOK_BOUNDS.text) return { value: null, error: `The ${what} is at most ${MARKET_LOOK_BOUNDS.text} characters.` };
  if (!PRINTABLE.test(value)) return { value: null, error: `The ${what} takes letters, digits, spaces and - . , & ' / ( ) + only.` };
  return { value, error: null };
}

/**
 * The website's Market page: what similar cars sold for, free and anonymous for a few looks a
 * day. Guarded like the landing page's VIN check (its per-second guard, per network address) and
 * counted per address over the day.
 */
export class MarketLookService {
  private readonly throttle: Throttle;

  constructor(
    private readonly market: MarketValues,
    private readonly guard: RateGuard,
    attempts: AuthAttemptsRepository,
  ) {
    this.throttle = new Throttle(attempts);
  }

  get perDay(): number {
    return MARKET_LOOKS_PER_ADDRESS.limit;
  }

  async look(query: MarketLookQuery, address: string, now = new Date()): Promise<MarketLookOutcome> {
    const errors: Record<string, string> = {};
    const make = checkText(query.make, 'make', true);
    const model = checkText(query.model, 'model', true);
    const damage = checkText(query.primaryDamage, 'primary damage', false);
    const lastYear = now.getUTCFullYear() + 1;
    const yearText = query.year.trim();
    const year = /^\d{4}$/.test(yearText) ? Number(yearText) : Number.NaN;
    if (make.error) errors.make = make.error;
    if (model.error) errors.model = model.error;
    if (damage.error) errors.primary_damage = damage.error;
    if (yearText === '') errors.year = 'Enter the model year.';
    else if (!(year >= MARKET_LOOK_BOUNDS.yearMin && year <= lastYear)) errors.year = `The year is a model year from ${MARKET_LOOK_BOUNDS.yearMin} to ${lastYear}.`;
    if (Object.keys(errors).length > 0) return { kind: 'invalid', errors };

    const second = await this.guard.consume(address);
    if (!second.allowed) return { kind: 'rate_limited', retryAfterMs: second.resetMs };
    const reservation = await this.throttle.reserve([{ rule: MARKET_LOOKS_PER_ADDRESS, subject: addressSubject(address) }], now);
    if (reservation.kind === 'throttled') return { kind: 'no_looks_left', retryAfterMs: reservation.retryAfterMs, perDay: this.perDay };

    const subject = { make: make.value!, model: model.value!, year, primaryDamage: damage.value };
    try {
      const value = await this.market.valueFor({ kind: 'vehicle', make: subject.make, model: subject.model, year }, { primaryDamage: subject.primaryDamage, months: 12, asOf: now });
      // A vehicle given by make, model and year always has figures (perhaps none): null would be a fault.
      if (value === null) throw new Error('market value of a vehicle given by make, model and year was null');
      return { kind: 'value', value, subject };
    } catch (error) {
      // A look that failed is not one the visitor had.
      await this.throttle.release(reservation);
      throw error;
    }
  }
}
