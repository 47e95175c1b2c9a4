import { addressSubject, Throttle, type ThrottleRule } from '../accounts/throttle.ts';
import type { MarketOptions, MarketSubject, MarketValue } from '../domain/market.ts';
import type { RateGuard } from '../limits/guards.ts';
import type { AuthAttemptsRepository } from '../storage/repositories/auth-attempts-repository.ts';
import { MAX_NAME_CHARS, parseMarketQuery } from './market-query.ts';

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

/** The bounds of what a visitor types: the API's own (docs/api.md, GET /api/v1/market). */
export const MARKET_LOOK_BOUNDS = { text: MAX_NAME_CHARS } as const;

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
    // An empty field of the form is one not filled in: each is named at once. What is filled in is
    // held to the API's own rules (market-query.ts), so that the page and GET /api/v1/market agree.
    const errors: Record<string, string> = {};
    const filled = new URLSearchParams();
    for (const [name, value, what] of [['make', query.make, 'make'], ['model', query.model, 'model'], ['year', query.year, 'model year']] as const) {
      if (value.trim() === '') errors[name] = `Enter the ${what}.`;
      else filled.set(name, value);
    }
    if (Object.keys(errors).length > 0) return { kind: 'invalid', errors };
    if (query.primaryDamage.trim() !== '') filled.set('primary_damage', query.primaryDamage);
    const parsed = parseMarketQuery(filled);
    if ('ok' in parsed) return { kind: 'invalid', errors: { [parsed.field]: parsed.messages[0]! } };
    if (parsed.subject.kind !== 'vehicle') throw new Error('a market look by make, model and year was read as another subject');

    const second = await this.guard.consume(address);
    if (!second.allowed) return { kind: 'rate_limited', retryAfterMs: second.resetMs };
    const reservation = await this.throttle.reserve([{ rule: MARKET_LOOKS_PER_ADDRESS, subject: addressSubject(address) }], now);
    if (reservation.kind === 'throttled') return { kind: 'no_looks_left', retryAfterMs: reservation.retryAfterMs, perDay: this.perDay };

    const { make, model, year } = parsed.subject;
    const subject = { make, model, year, primaryDamage: parsed.primaryDamage };
    try {
      const value = await this.market.valueFor(parsed.subject, { primaryDamage: parsed.primaryDamage, months: parsed.months, asOf: now });
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
