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
 * A sliding-window count of attempts in the database, shared by every instance. `check` says how
 * long until the next attempt is allowed (0: now).
 */
export class Throttle {
  constructor(private readonly attempts: AuthAttemptsRepository) {}

  async retryAfterMs(rule: ThrottleRule, subject: string, now: Date): Promise<number> {
    const { count, oldest } = await this.attempts.since(rule.kind, subject, new Date(now.getTime() - rule.windowMs));
    if (count < rule.limit || oldest === null) return 0;
    // The window slides: one attempt frees up when the oldest one in it ages out.
    return Math.max(1000, Date.parse(oldest) + rule.windowMs - now.getTime());
  }

  async record(rule: ThrottleRule, subject: string, now: Date): Promise<void> {
    await this.attempts.record(rule.kind, subject, now);
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
