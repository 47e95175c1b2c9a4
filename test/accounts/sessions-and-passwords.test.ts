import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { hashSecret, SESSION_IDLE_MS, SESSION_MAX_MS, SessionService } from '../../src/accounts/session-service.ts';
import { LOGIN_PER_EMAIL, Throttle } from '../../src/accounts/throttle.ts';
import { PasswordHasher } from '../../src/accounts/password-hasher.ts';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../support/databases.ts';
import { randomEmail, TEST_SCRYPT } from '../support/customer-app.ts';

const MINUTE = 60_000;
const T0 = new Date('2026-04-01T08:00:00.000Z');
const after = (ms: number) => new Date(T0.getTime() + ms);

describe.each(DIALECTS)('sessions, throttling and password hashes (%s)', (dialect) => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase(dialect);
  });
  afterAll(async () => {
    await t?.destroy();
  });

  test('sessions end after a week idle and a month in any case; use renews the idle timer', async () => {
    const account = await t.repos.accounts.create(randomEmail());
    const sessions = new SessionService(t.repos);
    const { id } = await sessions.start(account.id, T0);
    expect(await sessions.resolve(id, after(SESSION_IDLE_MS - MINUTE))).toMatchObject({ accountId: account.id, email: account.email });
    // Used just before the idle limit: the idle timer starts again from then.
    expect(await sessions.resolve(id, after(SESSION_IDLE_MS + 5 * MINUTE))).not.toBeNull();
    let now = after(SESSION_IDLE_MS - MINUTE);
    while (now.getTime() < T0.getTime() + SESSION_MAX_MS - SESSION_IDLE_MS) {
      now = new Date(now.getTime() + SESSION_IDLE_MS - MINUTE);
      expect(await sessions.resolve(id, now)).not.toBeNull();
    }
    expect(await sessions.resolve(id, after(SESSION_MAX_MS + MINUTE))).toBeNull();

    const idle = await sessions.start(account.id, T0);
    expect(await sessions.resolve(idle.id, after(SESSION_IDLE_MS + MINUTE))).toBeNull();
    expect(await sessions.resolve('not-a-session', T0)).toBeNull();
  });

  test('a session row holds the SHA-256 of the id; ending one or all of an account’s sessions', async () => {
    const account = await t.repos.accounts.create(randomEmail());
    const sessions = new SessionService(t.repos);
    const [a, b, c] = await Promise.all([sessions.start(account.id), sessions.start(account.id), sessions.start(account.id)]);
    expect(await t.repos.webSessions.findLive(hashSecret(a.id))).toBeDefined();
    expect(await t.repos.webSessions.findLive(a.id)).toBeUndefined();
    expect(await sessions.endOthers(account.id, a.id)).toBe(2);
    expect(await sessions.resolve(b.id)).toBeNull();
    expect(await sessions.resolve(c.id)).toBeNull();
    expect(await sessions.resolve(a.id)).not.toBeNull();
    await sessions.end(a.id);
    expect(await t.repos.webSessions.countForAccount(account.id)).toBe(0);
  });

  test('throttling counts in a sliding window and says when the next attempt is allowed', async () => {
    const throttle = new Throttle(t.repos.authAttempts);
    const subject = `email:${randomEmail()}`;
    for (let i = 0; i < 5; i++) {
      expect(await throttle.retryAfterMs(LOGIN_PER_EMAIL, subject, after(i * MINUTE))).toBe(0);
      expect((await throttle.reserve([{ rule: LOGIN_PER_EMAIL, subject }], after(i * MINUTE))).kind).toBe('reserved');
    }
    expect(await throttle.reserve([{ rule: LOGIN_PER_EMAIL, subject }], after(5 * MINUTE))).toEqual({ kind: 'throttled', retryAfterMs: 10 * MINUTE });
    // The oldest of the five ages out 15 minutes after it was made.
    expect(await throttle.retryAfterMs(LOGIN_PER_EMAIL, subject, after(5 * MINUTE))).toBe(10 * MINUTE);
    expect(await throttle.retryAfterMs(LOGIN_PER_EMAIL, subject, after(15 * MINUTE + 1))).toBe(0);
    await throttle.clear(LOGIN_PER_EMAIL, subject);
    expect(await throttle.retryAfterMs(LOGIN_PER_EMAIL, subject, after(5 * MINUTE))).toBe(0);
  });

  test('password hashes: scrypt, salted, self-describing; a hash of another cost still verifies and asks to be redone', async () => {
    const hasher = new PasswordHasher(TEST_SCRYPT);
    const [one, two] = await Promise.all([hasher.hash('pässword one'), hasher.hash('pässword one')]);
    expect(one).not.toBe(two);
    expect(await hasher.verify('pässword one', one)).toBe(true);
    // Unicode is normalised: the same characters typed another way verify.
    expect(await hasher.verify('pa\u0308ssword one', one)).toBe(true);
    expect(await hasher.verify('password one', one)).toBe(false);
    expect(await hasher.verify('pässword one', 'not a hash')).toBe(false);
    const stronger = new PasswordHasher({ N: 2048, r: 8, p: 1 });
    expect(stronger.needsRehash(one)).toBe(true);
    expect(await stronger.verify('pässword one', one)).toBe(true);
    expect(hasher.needsRehash(one)).toBe(false);
    expect(new PasswordHasher().needsRehash(one)).toBe(true);
    expect(await new PasswordHasher().hash('x'.repeat(10))).toMatch(/^scrypt\$32768\$8\$3\$/);
  });
});
