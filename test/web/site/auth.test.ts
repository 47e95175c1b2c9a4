import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { hashSecret } from '../../../src/accounts/session-service.ts';
import { DIALECTS } from '../../support/databases.ts';
import { createAccountTestApp, csrfOf, randomEmail, resetLinkFor, WebClient, type AccountTestApp } from '../../support/customer-app.ts';

const PASSWORD = 'correct horse battery';

describe.each(DIALECTS)('sign-up, log-in and sessions (%s)', (dialect) => {
  let t: AccountTestApp;
  beforeAll(async () => {
    t = await createAccountTestApp(dialect);
  });
  afterAll(async () => {
    await t?.close();
  });

  test('sign-up makes the account, stores only a scrypt hash, and logs the browser in', async () => {
    const browser = new WebClient(t.app);
    const email = randomEmail();
    const res = await browser.signUp(email.toUpperCase(), PASSWORD);
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/account?done=welcome');

    const account = await t.repos.accounts.findByEmail(email);
    expect(account?.email).toBe(email);
    const hash = await t.repos.passwords.get(account!.id);
    expect(hash).toMatch(/^scrypt\$\d+\$8\$\d+\$[\w-]{22}\$[\w-]{43}$/);
    expect(hash).not.toContain(PASSWORD);

    const home = await browser.get('/account');
    expect(home.statusCode).toBe(200);
    expect(home.body).toContain('Overview');
    expect(home.body).toContain(email);
  });

  test('the session cookie is HttpOnly, SameSite=Lax, Secure behind TLS, and stored only as a hash', async () => {
    const browser = new WebClient(t.app);
    const res = await browser.signUp(randomEmail());
    const cookie = res.cookies.find((c) => c.name === 'vh_session');
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', secure: true, path: '/' });
    // Signed: id.signature; the database holds the SHA-256 of the id, never the id.
    const id = cookie!.value.slice(0, cookie!.value.lastIndexOf('.'));
    const rows = await t.db.kysely.selectFrom('web_sessions').selectAll().execute();
    expect(rows.some((row) => row.id_hash === hashSecret(id))).toBe(true);
    expect(rows.some((row) => row.id_hash === id || row.id_hash.includes(id))).toBe(false);
  });

  test('sign-up refuses a taken email, a short password and a malformed email, field by field', async () => {
    const email = randomEmail();
    await new WebClient(t.app).signUp(email);
    const browser = new WebClient(t.app);
    const taken = await browser.signUp(email, PASSWORD);
    expect(taken.statusCode).toBe(422);
    expect(taken.body).toContain('An account with this email already exists');
    expect(taken.body).toContain('aria-invalid="true"');

    await browser.get('/signup');
    const bad = await browser.post('/signup', { email: 'not-an-email', password: 'short' });
    expect(bad.statusCode).toBe(422);
    expect(bad.body).toContain('Enter an email address such as buyer@example.com.');
    expect(bad.body).toContain('Use at least 10 characters.');
    // The address typed is kept, the password never echoed.
    expect(bad.body).toContain('value="not-an-email"');
    expect(bad.body).not.toContain('value="short"');
  });

  test('log-in with the right password starts a new session; a wrong one says so without telling which part', async () => {
    const email = randomEmail();
    await new WebClient(t.app).signUp(email);
    const browser = new WebClient(t.app);
    const wrong = await browser.logIn(email, 'wrong password!!');
    expect(wrong.statusCode).toBe(422);
    expect(wrong.body).toContain('That email and password do not match an account');
    const unknown = await browser.logIn(randomEmail(), PASSWORD);
    expect(unknown.body).toContain('That email and password do not match an account');

    const ok = await browser.logIn(email, PASSWORD);
    expect(ok.statusCode).toBe(303);
    expect(ok.headers.location).toBe('/account');
    expect((await browser.get('/account')).statusCode).toBe(200);
  });

  test('log-in returns to the account page asked for, and never to another site', async () => {
    const email = randomEmail();
    await new WebClient(t.app).signUp(email);
    const browser = new WebClient(t.app);
    const gate = await browser.get('/account/tokens');
    expect(gate.statusCode).toBe(303);
    expect(gate.headers.location).toBe('/login?next=%2Faccount%2Ftokens');
    await browser.get(gate.headers.location as string);
    const back = await browser.post('/login', { email, password: PASSWORD, next: '/account/tokens' });
    expect(back.headers.location).toBe('/account/tokens');

    const other = new WebClient(t.app);
    await other.get('/login');
    for (const next of ['https://evil.example/account', '//evil.example/account', '/\\evil.example', '/pricing']) {
      await other.get('/login');
      const res = await other.post('/login', { email, password: PASSWORD, next });
      expect(res.headers.location).toBe('/account');
      await other.post('/logout');
    }
  });

  test('a next= with characters outside Latin-1 or ASCII redirects, percent-encoded, instead of failing', async () => {
    const email = randomEmail();
    await new WebClient(t.app).signUp(email);
    const cases: [string, string][] = [
      ['/account/tokens\u2215x', '/account/tokens%E2%88%95x'],
      ['/account?tab=usage&note=\u00e9t\u00e9 \u4e2d', '/account'], // whitespace: refused as before
      ['/account?tab=\u00e9t\u00e9\u4e2d', '/account?tab=%C3%A9t%C3%A9%E4%B8%AD'],
      ['/account/\u0000x', '/account/%00x'],
      ['/account/../pricing', '/account'],
      ['/account/%2e%2e/pricing', '/account'],
      ['/account\u2215..\u2215pricing', '/account'], // not under /account/: refused as before
    ];
    for (const [next, location] of cases) {
      const browser = new WebClient(t.app);
      await browser.get('/login');
      const res = await browser.post('/login', { email, password: PASSWORD, next });
      expect({ next, status: res.statusCode, location: res.headers.location }).toEqual({ next, status: 303, location });
      // A logged-in browser sent to the log-in page again is redirected the same way.
      const again = await browser.get(`/login?next=${encodeURIComponent(next)}`);
      expect({ next, status: again.statusCode, location: again.headers.location }).toEqual({ next, status: 303, location });
    }
  });

  test('log-out ends the session on the server: the old cookie no longer opens the account', async () => {
    const browser = new WebClient(t.app);
    await browser.signUp(randomEmail());
    const stolen = browser.cookieHeader();
    await browser.get('/account');
    const out = await browser.post('/logout');
    expect(out.statusCode).toBe(303);
    expect(browser.cookies.has('vh_session')).toBe(false);
    const replay = await t.app.inject({ url: '/account', headers: { cookie: stolen } });
    expect(replay.statusCode).toBe(303);
    expect(replay.headers.location).toMatch(/^\/login/);
  });

  test('session fixation: a session id planted before log-in is never the logged-in session', async () => {
    const email = randomEmail();
    await new WebClient(t.app).signUp(email);

    // An id the attacker chose, planted in the victim's browser, opens nothing and is not adopted.
    const victim = new WebClient(t.app);
    victim.cookies.set('vh_session', 'attacker-chosen-value');
    expect((await victim.get('/account')).statusCode).toBe(303);
    const login = await victim.logIn(email);
    expect(login.statusCode).toBe(303);
    const issued = victim.cookies.get('vh_session')!;
    expect(issued).not.toContain('attacker-chosen-value');
    expect((await victim.get('/account')).statusCode).toBe(200);

    // A browser already logged in (the attacker's own session, planted) that logs in again gets a
    // new id, and the planted one ends: the attacker is not let into the victim's account.
    const attacker = new WebClient(t.app);
    const attackerEmail = randomEmail();
    await attacker.signUp(attackerEmail);
    const planted = attacker.cookies.get('vh_session')!;
    const target = new WebClient(t.app);
    target.cookies.set('vh_session', planted);
    target.cookies.set('vh_csrf', attacker.cookies.get('vh_csrf')!);
    await target.get('/pricing');
    const relogin = await target.post('/login', { email, password: PASSWORD });
    expect(relogin.statusCode).toBe(303);
    expect(target.cookies.get('vh_session')).not.toBe(planted);
    expect((await target.get('/account')).body).toContain(email);
    expect((await attacker.get('/account')).statusCode).toBe(303);
  });

  test('changing the password needs the current one, logs out other browsers and renews this session', async () => {
    const email = randomEmail();
    const here = new WebClient(t.app);
    await here.signUp(email);
    const elsewhere = new WebClient(t.app);
    await elsewhere.logIn(email);
    expect((await elsewhere.get('/account')).statusCode).toBe(200);

    await here.get('/account/settings');
    const wrong = await here.post('/account/settings/password', { current_password: 'not it at all', new_password: 'a brand new passphrase' });
    expect(wrong.statusCode).toBe(422);
    expect(wrong.body).toContain('That is not your current password.');

    const before = here.cookies.get('vh_session');
    const ok = await here.post('/account/settings/password', { current_password: PASSWORD, new_password: 'a brand new passphrase' });
    expect(ok.statusCode).toBe(303);
    expect(here.cookies.get('vh_session')).not.toBe(before);
    expect((await here.get(ok.headers.location as string)).body).toContain('Your password is changed');
    expect((await elsewhere.get('/account')).statusCode).toBe(303);

    expect((await new WebClient(t.app).logIn(email, PASSWORD)).statusCode).toBe(422);
    expect((await new WebClient(t.app).logIn(email, 'a brand new passphrase')).statusCode).toBe(303);
  });

  test('password reset: the same answer for any address; the mailed link works once and logs every browser out', async () => {
    const email = randomEmail();
    const owner = new WebClient(t.app);
    await owner.signUp(email);

    const browser = new WebClient(t.app, '198.51.100.7');
    await browser.get('/forgot-password');
    const known = await browser.post('/forgot-password', { email });
    await browser.get('/forgot-password');
    const unknown = await browser.post('/forgot-password', { email: randomEmail() });
    expect(known.statusCode).toBe(200);
    expect(unknown.statusCode).toBe(200);
    const strip = (html: string) => html.replace(/<strong>[^<]*<\/strong>/, '').replace(/value="[^"]*"/g, '');
    expect(strip(known.body)).toBe(strip(unknown.body));

    const link = new URL(resetLinkFor(await t.outbox(), email));
    expect(link.origin).toBe('https://vinhistory.test');
    const form = await browser.get(link.pathname + link.search);
    expect(form.statusCode).toBe(200);
    expect(form.body).toContain(email);
    const token = link.searchParams.get('token')!;
    expect((await browser.post('/reset-password', { token, password: 'short' })).statusCode).toBe(422);
    const done = await browser.post('/reset-password', { token, password: 'the reset passphrase' });
    expect(done.statusCode).toBe(303);
    expect(done.headers.location).toBe('/account?done=password-reset');
    expect((await browser.get('/account')).statusCode).toBe(200);
    // The owner's old session is over; the link is used up; the new password works.
    expect((await owner.get('/account')).statusCode).toBe(303);
    expect((await browser.get(link.pathname + link.search)).statusCode).toBe(410);
    expect((await new WebClient(t.app).logIn(email, 'the reset passphrase')).statusCode).toBe(303);
    // The database never held the link's secret.
    const rows = await t.db.kysely.selectFrom('password_resets').selectAll().execute();
    expect(rows.every((row) => row.token_hash !== token)).toBe(true);
  });

  test('an account made by the operator (no password) sets its first one through the reset link', async () => {
    const email = randomEmail();
    await t.repos.accounts.create(email);
    expect((await new WebClient(t.app).logIn(email, PASSWORD)).statusCode).toBe(422);
    const browser = new WebClient(t.app, '198.51.100.8');
    await browser.get('/forgot-password');
    await browser.post('/forgot-password', { email });
    const link = new URL(resetLinkFor(await t.outbox(), email));
    await browser.get(link.pathname + link.search);
    const set = await browser.post('/reset-password', { token: link.searchParams.get('token')!, password: PASSWORD });
    expect(set.statusCode).toBe(303);
    expect((await new WebClient(t.app).logIn(email, PASSWORD)).statusCode).toBe(303);
  });

  test('log-in throttling: after 5 failures for an email, even the right password waits', async () => {
    const email = randomEmail();
    await new WebClient(t.app).signUp(email);
    const attacker = new WebClient(t.app, '192.0.2.50');
    for (let i = 0; i < 5; i++) expect((await attacker.logIn(email, `guess number ${i}!`)).statusCode).toBe(422);
    const refused = await attacker.logIn(email, PASSWORD);
    expect(refused.statusCode).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(60);
    expect(refused.body).toContain('Too many attempts');
    // From another network too: the limit is on the account, not only the address.
    expect((await new WebClient(t.app, '192.0.2.51').logIn(email, PASSWORD)).statusCode).toBe(429);
    // Other accounts are not affected.
    const other = randomEmail();
    await new WebClient(t.app).signUp(other);
    expect((await new WebClient(t.app, '192.0.2.52').logIn(other, PASSWORD)).statusCode).toBe(303);
  });

  test('log-in throttling per network address: 20 failures across emails block that address', async () => {
    const email = randomEmail();
    await new WebClient(t.app).signUp(email);
    const sprayer = new WebClient(t.app, '192.0.2.99');
    for (let i = 0; i < 20; i++) await sprayer.logIn(randomEmail(), 'password spray 1');
    expect((await sprayer.logIn(email, PASSWORD)).statusCode).toBe(429);
    expect((await new WebClient(t.app, '192.0.2.100').logIn(email, PASSWORD)).statusCode).toBe(303);
  });
});

/** A slower scrypt (about 20-50 ms a hash here): a wider window between a guess arriving and its outcome. */
const SLOW_SCRYPT = { N: 2 ** 14, r: 8, p: 1 };

const statusCounts = (answers: { statusCode: number }[]) =>
  answers.reduce<Record<number, number>>((counts, { statusCode }) => ({ ...counts, [statusCode]: (counts[statusCode] ?? 0) + 1 }), {});

describe.each(DIALECTS.flatMap((dialect) => [[dialect, 'test scrypt'], [dialect, 'slower scrypt']] as const))(
  'throttles under concurrency (%s, %s)',
  (dialect, cost) => {
    let t: AccountTestApp;
    beforeAll(async () => {
      t = await createAccountTestApp(dialect, cost === 'slower scrypt' ? { overrides: { passwordCost: SLOW_SCRYPT } } : {});
    });
    afterAll(async () => {
      await t?.close();
    });

    test('log-in: of 41 guesses at once for one email only 5 are checked; the right password, sent last, is refused', async () => {
      const email = randomEmail();
      await new WebClient(t.app).signUp(email);
      const passwords = [...Array.from({ length: 40 }, (_, i) => `wrong guess ${i}!!`), PASSWORD];
      // Each from an address of its own: only the per-email limit applies.
      const browsers = passwords.map(() => new WebClient(t.app));
      await Promise.all(browsers.map((browser) => browser.get('/login')));
      const answers = await Promise.all(browsers.map((browser, i) => browser.post('/login', { email, password: passwords[i]! })));
      expect(statusCounts(answers)).toEqual({ 422: 5, 429: 36 });
      expect(answers.at(-1)!.statusCode).toBe(429);
      expect(answers.at(-1)!.body).toContain('Too many attempts');
      expect(Number(answers.at(-1)!.headers['retry-after'])).toBeGreaterThan(60);
      expect((await new WebClient(t.app).logIn(email, PASSWORD)).statusCode).toBe(429);
    });

    test('log-in: of 26 guesses at once from one address across emails only 20 are checked', async () => {
      const sprayer = new WebClient(t.app);
      await sprayer.get('/login');
      const answers = await Promise.all(Array.from({ length: 26 }, () => sprayer.post('/login', { email: randomEmail(), password: 'password spray 1' })));
      expect(statusCounts(answers)).toEqual({ 422: 20, 429: 6 });
    });

    test('sign-up: of 16 sign-ups at once from one address only 10 make an account', async () => {
      const emails = Array.from({ length: 16 }, () => randomEmail());
      // Not an address another test of this app has used: its sign-ups would count here.
      const address = '192.0.2.230';
      const browsers = emails.map(() => new WebClient(t.app, address));
      await Promise.all(browsers.map((browser) => browser.get('/signup')));
      const answers = await Promise.all(browsers.map((browser, i) => browser.post('/signup', { email: emails[i]!, password: PASSWORD, terms: 'accepted' })));
      expect(statusCounts(answers)).toEqual({ 303: 10, 429: 6 });
      const made = await Promise.all(emails.map((email) => t.repos.accounts.findByEmail(email)));
      expect(made.filter(Boolean)).toHaveLength(10);
      expect(answers.find((res) => res.statusCode === 429)!.body).toContain('Too many accounts were created from your network.');
    });
  },
);

describe('CSRF and the JSON API (sqlite)', () => {
  let t: AccountTestApp;
  beforeAll(async () => {
    t = await createAccountTestApp('sqlite');
  });
  afterAll(async () => {
    await t?.close();
  });

  test('every form refuses a request without the token, with a wrong one, or with one from another session', async () => {
    const browser = new WebClient(t.app);
    const email = randomEmail();
    await browser.signUp(email);
    const account = await t.repos.accounts.findByEmail(email);
    await browser.get('/account/tokens');
    const mine = browser.csrf!;

    const missing = await browser.post('/account/tokens', { name: 'x' }, { csrf: null });
    expect(missing.statusCode).toBe(403);
    expect(missing.headers['content-type']).toMatch(/text\/html/);
    expect(missing.body).toContain('This form has expired');
    expect((await browser.post('/account/tokens', { name: 'x' }, { csrf: `${mine.slice(0, -2)}xx` })).statusCode).toBe(403);

    // A token (and its cookie) taken from another session of the site does not pass in this one.
    const other = new WebClient(t.app);
    await other.signUp(randomEmail());
    await other.get('/account/tokens');
    const foreign = new WebClient(t.app);
    foreign.cookies.set('vh_session', browser.cookies.get('vh_session')!);
    foreign.cookies.set('vh_csrf', other.cookies.get('vh_csrf')!);
    expect((await foreign.post('/account/tokens', { name: 'x' }, { csrf: other.csrf })).statusCode).toBe(403);

    // Without the CSRF cookie there is no secret to check against.
    const noCookie = new WebClient(t.app);
    noCookie.cookies.set('vh_session', browser.cookies.get('vh_session')!);
    expect((await noCookie.post('/account/tokens', { name: 'x' }, { csrf: mine })).statusCode).toBe(403);

    for (const url of ['/logout', '/login', '/signup', '/forgot-password', '/account/billing/cancel', '/account/settings/password']) {
      expect((await browser.post(url, {}, { csrf: null })).statusCode, url).toBe(403);
    }
    // Nothing was done by any of the refused requests.
    expect(await t.repos.tokens.listForAccount(account!.id)).toEqual([]);
    expect((await browser.get('/account')).statusCode).toBe(200);

    const ok = await browser.post('/account/tokens', { name: 'with token' }, { csrf: mine });
    expect(ok.statusCode).toBe(303);
    expect(ok.headers.location).toBe('/account/tokens?done=created#created');
  });

  test('the CSRF cookie is HttpOnly, SameSite and signed; pages carry a strict CSP', async () => {
    const res = await t.app.inject({ url: '/login' });
    const cookie = res.cookies.find((c) => c.name === 'vh_csrf');
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', secure: true });
    expect(cookie!.value).toMatch(/^[\w-]+\.[\w+/-]+$/);
    const csp = String(res.headers['content-security-policy']);
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("form-action 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).not.toMatch(/<script>|\sstyle=|\son[a-z]+=/);
    expect(csrfOf(res.body)).toBeTruthy();
  });

  test('the JSON API is untouched: no cookies, no CSRF, text/plain still 415, forms not parsed', async () => {
    const plain = await t.app.inject({ method: 'POST', url: '/api/v1/search', headers: { 'content-type': 'text/plain' }, payload: 'vin=x' });
    expect(plain.statusCode).toBe(401);
    const account = await t.repos.accounts.create(randomEmail());
    await t.repos.subscriptions.create({ accountId: account.id, planCode: 'standard', billing: 'monthly', startedAt: new Date(Date.now() - 1000) });
    const { token } = await t.repos.tokens.create(account.id, 'api');
    const text = await t.app.inject({ method: 'POST', url: '/api/v1/search', headers: { authorization: token, 'content-type': 'text/plain' }, payload: 'vin=x' });
    expect(text.statusCode).toBe(415);
    const form = await t.app.inject({
      method: 'POST',
      url: '/api/v1/search',
      headers: { authorization: token, 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'vin=4JGBF7BE5AA585531',
    });
    expect(form.statusCode).toBe(415);
    const json = await t.app.inject({ method: 'POST', url: '/api/v1/search', headers: { authorization: token }, payload: { vin: '4JGBF7BE5AA585531' } });
    expect(json.statusCode).toBe(404);
    expect(json.headers['set-cookie']).toBeUndefined();
    const docs = await t.app.inject({ url: '/docs/' });
    expect(docs.headers['set-cookie']).toBeUndefined();
  });
});
