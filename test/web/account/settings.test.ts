import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DIALECTS } from '../../support/databases.ts';
import { createAccountTestApp, randomEmail, WebClient, type AccountTestApp } from '../../support/customer-app.ts';

const PASSWORD = 'correct horse battery';
const NEW_PASSWORD = 'a brand new passphrase';

const statusCounts = (answers: { statusCode: number }[]) =>
  answers.reduce<Record<number, number>>((counts, { statusCode }) => ({ ...counts, [statusCode]: (counts[statusCode] ?? 0) + 1 }), {});

describe.each(DIALECTS)('the settings page’s current-password check is throttled per account (%s)', (dialect) => {
  let t: AccountTestApp;
  beforeAll(async () => {
    t = await createAccountTestApp(dialect);
  });
  afterAll(async () => {
    await t?.close();
  });

  async function loggedIn(): Promise<{ browser: WebClient; email: string }> {
    const email = randomEmail();
    const browser = new WebClient(t.app);
    await browser.signUp(email, PASSWORD);
    await browser.get('/account/settings');
    return { browser, email };
  }

  test('after 5 wrong current passwords even the right one waits, from any browser of the account', async () => {
    const { browser, email } = await loggedIn();
    for (let i = 0; i < 5; i++) {
      const wrong = await browser.post('/account/settings/password', { current_password: `not it ${i} at all`, new_password: NEW_PASSWORD });
      expect(wrong.statusCode).toBe(422);
      expect(wrong.body).toContain('That is not your current password.');
    }
    const refused = await browser.post('/account/settings/password', { current_password: PASSWORD, new_password: NEW_PASSWORD });
    expect(refused.statusCode).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(60);
    expect(refused.body).toContain('Too many wrong passwords');
    // The limit is the account's: another browser logged in to it (another address) waits too.
    const other = new WebClient(t.app);
    expect((await other.logIn(email, PASSWORD)).statusCode).toBe(303);
    await other.get('/account/settings');
    expect((await other.post('/account/settings/password', { current_password: PASSWORD, new_password: NEW_PASSWORD })).statusCode).toBe(429);
    // Nothing changed: the old password still logs in, the new one does not.
    expect((await new WebClient(t.app).logIn(email, NEW_PASSWORD)).statusCode).toBe(422);
    expect((await new WebClient(t.app).logIn(email, PASSWORD)).statusCode).toBe(303);
    // Other accounts are not affected.
    const { browser: someoneElse } = await loggedIn();
    expect((await someoneElse.post('/account/settings/password', { current_password: PASSWORD, new_password: NEW_PASSWORD })).statusCode).toBe(303);
  });

  test('a right current password ends the count of the wrong ones before it', async () => {
    const { browser } = await loggedIn();
    for (let i = 0; i < 4; i++) await browser.post('/account/settings/password', { current_password: `not it ${i} at all`, new_password: NEW_PASSWORD });
    // Right current password, new one too short: checked and refused for the new one only.
    const short = await browser.post('/account/settings/password', { current_password: PASSWORD, new_password: 'short' });
    expect(short.statusCode).toBe(422);
    expect(short.body).not.toContain('That is not your current password.');
    for (let i = 0; i < 4; i++) expect((await browser.post('/account/settings/password', { current_password: `again ${i} not it`, new_password: NEW_PASSWORD })).statusCode).toBe(422);
    expect((await browser.post('/account/settings/password', { current_password: PASSWORD, new_password: NEW_PASSWORD })).statusCode).toBe(303);
  });

  test('of 41 current passwords sent at once only 5 are checked; the right one, sent last, is refused', async () => {
    const { browser, email } = await loggedIn();
    const currents = [...Array.from({ length: 40 }, (_, i) => `wrong current ${i}!!`), PASSWORD];
    const answers = await Promise.all(currents.map((current) => browser.post('/account/settings/password', { current_password: current, new_password: NEW_PASSWORD })));
    expect(statusCounts(answers)).toEqual({ 422: 5, 429: 36 });
    expect(answers.at(-1)!.statusCode).toBe(429);
    expect((await new WebClient(t.app).logIn(email, NEW_PASSWORD)).statusCode).toBe(422);
  });
});
