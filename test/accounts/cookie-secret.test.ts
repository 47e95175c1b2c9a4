import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { COOKIE_SECRET_SETTING } from '../../src/accounts/session-service.ts';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../support/databases.ts';
import { createAccountTestApp, randomEmail, WebClient } from '../support/customer-app.ts';

describe.each(DIALECTS)('the cookie secret (%s)', (dialect) => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase(dialect);
  });
  afterAll(async () => {
    await database?.destroy();
  });

  test('without COOKIE_SECRET one is generated once, stored, and shared by every instance on the database', async () => {
    expect(await database.repos.settings.get(COOKIE_SECRET_SETTING)).toBeUndefined();
    // Several instances starting at once on an empty database agree on one secret.
    const values = await Promise.all(Array.from({ length: 5 }, (_, i) => database.repos.settings.getOrCreate('race-test', () => `value-${i}`)));
    expect(new Set(values).size).toBe(1);

    const first = await createAccountTestApp(dialect, { database });
    const second = await createAccountTestApp(dialect, { database });
    try {
      const secret = await database.repos.settings.get(COOKIE_SECRET_SETTING);
      expect(secret).toMatch(/^[\w-]{43}$/);
      // A browser logged in through one instance is logged in on the other.
      const browser = new WebClient(first.app);
      const email = randomEmail();
      await browser.signUp(email);
      const res = await second.app.inject({ url: '/account', headers: { cookie: browser.cookieHeader() } });
      expect(res.statusCode).toBe(200);
      expect(res.body).toContain(email);
      expect(await database.repos.settings.get(COOKIE_SECRET_SETTING)).toBe(secret);
    } finally {
      await first.close();
      await second.close();
    }
  });

  test('COOKIE_SECRET, when given, signs the cookies: an instance with another secret does not accept them', async () => {
    const secretA = 'a'.repeat(40);
    const one = await createAccountTestApp(dialect, { database, env: { COOKIE_SECRET: secretA } });
    const same = await createAccountTestApp(dialect, { database, env: { COOKIE_SECRET: secretA } });
    const other = await createAccountTestApp(dialect, { database, env: { COOKIE_SECRET: 'b'.repeat(40) } });
    try {
      const browser = new WebClient(one.app);
      await browser.signUp(randomEmail());
      const cookie = browser.cookieHeader();
      expect((await same.app.inject({ url: '/account', headers: { cookie } })).statusCode).toBe(200);
      expect((await other.app.inject({ url: '/account', headers: { cookie } })).statusCode).toBe(303);
    } finally {
      await Promise.all([one.close(), same.close(), other.close()]);
    }
  });
});
