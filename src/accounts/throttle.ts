import type { AttemptKind, AuthAttemptsRepository } from '../storage/repositories/auth-attempts-repository.ts';

export interface ThrottleRule {
  kind: AttemptKind;
  limit: number;
  windowMs: number;
}

/** Failed log-ins: 5 per email and 20 per network address in 15 minutes. */
export const LOGIN_PER_EMAIL: ThrottleRule = { kind: 'login_failure', limit: 5, windowMs: 15 * 60 * 1000 };
export const LOGIN_PER_ADDRESS: ThrottleRule = { kind: 'login_failure', limit: 20, windowMs: 15 * 60 * 1000 };
/** Reset mails: 3 per email and 10 per address an hour, so the form cannot be used to flood a mailbox. */
export const RESET_PER_EMAIL: ThrottleRule = { kind: 'reset_request', limit: 3, windowMs: 60 * 60 * 1000 };
export const RESET_PER_ADDRESS: ThrottleRule = { kind: 'reset_request', limit: 10, windowMs: 60 * 60 * 1000 };
/** New accounts: 10 per address an hour. */
export const SIGNUP_PER_ADDRESS: ThrottleRule = { kind: 'signup', limit: 10, windowMs: 60 * 60 * 1000 };
/**
 * Wrong current passwords on the settings page: 5 per account in 15 minutes, so that a stolen
 * session cannot be used to guess the password (and then change it) at scrypt speed.
 */
export const PASSWORD_CHECK_PER_ACCOUNT: ThrottleRule = { kind: 'password_check', limit: 5, windowMs: 15 * 60 * 1000 };

/** One rule applied to one subject (an email, an address, an account). */
export interface ThrottleClaim {
  rule: ThrottleRule;
  subject: string;
}

/** Places taken under every claim of a `reserve`, to keep (the attempt counts) or `release`. */
export interface Reserved {
  kind: 'reserved';
  ids: string[];
}

export type Reservation = Reserved | { kind: 'throttled'; retryAfterMs: number };

/**
 * A sliding-window count of attempts in the database, shared by every instance. An attempt takes
 * its place before the work it limits (a password check, a new account) begins: attempts that
 * arrive together are counted against each other, and no more than the limit are ever let through.
 */
export class Throttle {
  constructor(private readonly attempts: AuthAttemptsRepository) {}

  /** Takes a place under every claim, or none when any of them is at its limit (with the longest wait). */
  async reserve(claims: ThrottleClaim[], now: Date): Promise<Reservation> {
    const ids = await this.attempts.reserve(
      claims.map(({ rule, subject }) => ({ kind: rule.kind, subject, limit: rule.limit, since: new Date(now.getTime() - rule.windowMs) })),
      now,
    );
    if (ids !== null) return { kind: 'reserved', ids };
    const waits = await Promise.all(claims.map(({ rule, subject }) => this.retryAfterMs(rule, subject, now)));
    // A place may have freed up since (a released reservation): still a refusal, with a short wait.
    return { kind: 'throttled', retryAfterMs: Math.max(1000, ...waits) };
  }

  /** Gives the places back: the attempt is over and the rules do not count it. */
  async release(reserved: Reserved): Promise<void> {
    await this.attempts.release(reserved.ids);
  }

  /** How long until the next attempt is allowed (0: now). */
  async retryAfterMs(rule: ThrottleRule, subject: string, now: Date): Promise<number> {
    const { count, oldest } = await this.attempts.since(rule.kind, subject, new Date(now.getTime() - rule.windowMs));
    if (count < rule.limit || oldest === null) return 0;
    // The window slides: one attempt frees up when the oldest one in it ages out.
    return Math.max(1000, Date.parse(oldest) + rule.windowMs - now.getTime());
  }

  async clear(rule: ThrottleRule, subject: string): Promise<void> {
    await this.attempts.clear(rule.kind, subject);
  }

  /** Old rows only weigh on the table; the longest window is an hour, so a day is plenty. */
  async prune(now: Date): Promise<void> {
    await this.attempts.deleteOlderThan(new Date(now.getTime() - 24 * 60 * 60 * 1000));
  }
}

export const emailSubject = (email: string) => `email:${email}`;
export const addressSubject = (ip: string) => `ip:${ip}`;
export const accountSubject = (accountId: string) => `account:${accountId}`;
