import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { hashSecret, SESSION_IDLE_MS, SESSION_MAX_MS, SessionService } from '../../src/accounts/session-service.ts';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../support/databases.ts';
import { randomEmail } from '../support/customer-app.ts';

const MINUTE = 60_000;
const T0 = new Date('2026-04-01T08:00:00.000Z');
const after = (ms: number) => new Date(T0.getTime() + ms);

describe.each(DIALECTS)('sessions (%s)', (dialect) => {
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
});
