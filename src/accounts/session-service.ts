import { hash as digest, randomBytes } from 'node:crypto';
import type { Repositories } from '../storage/repositories/index.ts';
import type { LiveSession } from '../domain/web-session.ts';

/** Settings key of the generated cookie secret. */
export const COOKIE_SECRET_SETTING = 'cookie_secret';

/** A session ends after a week without use, and a month after log-in whatever happens. */
export const SESSION_IDLE_MS = 7 * 24 * 60 * 60 * 1000;
export const SESSION_MAX_MS = 30 * 24 * 60 * 60 * 1000;
/** last_seen_at is written at most this often: a page view must not always cost a write. */
const TOUCH_INTERVAL_MS = 10 * 60 * 1000;

export function hashSecret(value: string): string {
  return digest('sha256', value, 'hex');
}

/** 256 random bits, base64url: the session id the cookie carries. */
export function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * Server-side sessions: the cookie holds a random id, the database its SHA-256 (a copy of the
 * table does not let anyone log in). A session is only ever made by a successful log-in or
 * sign-up, with a new id, so an id planted in a browser beforehand (session fixation) never
 * becomes a logged-in session.
 */
export class SessionService {
  constructor(private readonly repos: Repositories) {}

  async start(accountId: string, now = new Date()): Promise<{ id: string; expiresAt: Date }> {
    // Expired rows are only dead weight; a log-in is a rare enough moment to sweep them (indexed).
    await this.repos.webSessions.deleteExpired(now);
    const id = newSecret();
    const expiresAt = new Date(now.getTime() + SESSION_IDLE_MS);
    await this.repos.webSessions.create({ idHash: hashSecret(id), accountId, expiresAt }, now);
    return { id, expiresAt };
  }

  /** The live session of this cookie value, its idle timer renewed (up to the absolute limit). */
  async resolve(id: string, now = new Date()): Promise<LiveSession | null> {
    const idHash = hashSecret(id);
    const session = await this.repos.webSessions.findLive(idHash, now);
    if (!session) return null;
    if (now.getTime() - Date.parse(session.lastSeenAt) >= TOUCH_INTERVAL_MS) {
      const hardEnd = Date.parse(session.createdAt) + SESSION_MAX_MS;
      const expiresAt = new Date(Math.min(now.getTime() + SESSION_IDLE_MS, hardEnd));
      await this.repos.webSessions.touch(idHash, now, expiresAt);
      return { ...session, lastSeenAt: now.toISOString(), expiresAt: expiresAt.toISOString() };
    }
    return session;
  }

  async end(id: string): Promise<void> {
    await this.repos.webSessions.delete(hashSecret(id));
  }

  /** Logs the account out everywhere but in the browser holding `keepId`. */
  async endOthers(accountId: string, keepId: string): Promise<number> {
    return this.repos.webSessions.deleteForAccount(accountId, hashSecret(keepId));
  }

  async endAll(accountId: string): Promise<number> {
    return this.repos.webSessions.deleteForAccount(accountId);
  }

  /** How many browsers are logged in to the account now, this one included. */
  async countLive(accountId: string, now = new Date()): Promise<number> {
    return this.repos.webSessions.countForAccount(accountId, now);
  }

  /**
   * The secret that signs session cookies when none is configured: made once and kept in the
   * database, so that every instance signs with the same one and a restart logs no one out.
   */
  async storedCookieSecret(): Promise<string> {
    return this.repos.settings.getOrCreate(COOKIE_SECRET_SETTING, newSecret);
  }
}
