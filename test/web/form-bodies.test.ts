import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createAccountTestApp, randomEmail, WebClient, type AccountTestApp } from '../support/customer-app.ts';

/**
 * Issue 28, F7: the page routes took JSON bodies, and `{"email": {"toString": 1}}` made a 500 with
 * a stack in the log. Every POST route of src/web/ (found in the sources, so a new form is covered
 * by itself) answers 415 to JSON and text bodies, and 422 to a form field sent twice, on the
 * production configuration, and none answers 500.
 */
const WEB = fileURLToPath(new URL('../../src/web/', import.meta.url));

function postRoutes(): string[] {
  const files = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) => (entry.isDirectory() ? files(path.join(dir, entry.name)) : entry.name.endsWith('.ts') ? [path.join(dir, entry.name)] : []));
  return files(WEB).flatMap((file) => {
    const prefix = file.includes(`${path.sep}account${path.sep}`) ? '/account' : '';
    const text = readFileSync(file, 'utf8');
    return [...text.matchAll(/app\.post\(\s*('([^']+)'|RESET_PASSWORD_PATH)/g)].map((match) => `${prefix}${match[2] ?? '/reset-password'}`.replace(/:[a-z]+/g, 'x_1'));
  });
}

describe('page routes take form bodies only (issue 28, F7; production configuration)', () => {
  let t: AccountTestApp;
  let browser: WebClient;
  beforeAll(async () => {
    t = await createAccountTestApp('sqlite', { env: { NODE_ENV: 'production', COOKIE_SECRET: 'x'.repeat(40) } });
    browser = new WebClient(t.app);
    await browser.signUp(randomEmail());
    await browser.get('/account/settings');
  });
  afterAll(async () => {
    await t?.close();
  });

  const routes = postRoutes();

  test('finds every POST route of the pages', () => {
    expect(routes.length).toBe(31);
    expect(routes).toEqual(expect.arrayContaining(['/login', '/signup', '/forgot-password', '/reset-password', '/account/brand', '/account/settings/password', '/admin/login', '/admin/logout', '/verify', '/account/batches']));
  });

  test('a JSON or text body is 415 on every one, logged in or not, with a page saying so', async () => {
    for (const url of routes) {
      // Logged out, an account route sends to the log-in page before any body is read.
      for (const cookie of url.startsWith('/account/') ? [browser.cookieHeader()] : ['', browser.cookieHeader()]) {
        const json = await t.app.inject({
          method: 'POST',
          url,
          headers: { cookie, 'content-type': 'application/json' },
          payload: JSON.stringify({ _csrf: browser.csrf, email: { toString: 1 }, password: { toString: 1 }, name: ['a'] }),
        });
        expect(json.statusCode, `${url} JSON`).toBe(415);
        expect(json.headers['content-type']).toMatch(/^text\/html/);
        expect(json.body).toContain('sent by a browser form');
        const text = await t.app.inject({ method: 'POST', url, headers: { cookie, 'content-type': 'text/plain' }, payload: 'email=a' });
        expect(text.statusCode, `${url} text`).toBe(415);
      }
    }
  });

  test('a form field sent twice is 422 naming the field, on every one', async () => {
    for (const url of routes) {
      const res = await t.app.inject({
        method: 'POST',
        url,
        headers: { cookie: browser.cookieHeader(), 'content-type': 'application/x-www-form-urlencoded' },
        payload: `_csrf=${encodeURIComponent(browser.csrf!)}&email=a%40example.com&email=b%40example.com`,
      });
      expect(res.statusCode, url).toBe(422);
      expect(res.body).toContain('The field “email” was sent more than once');
    }
  });

  test('the forms still work as a browser sends them', async () => {
    const other = new WebClient(t.app);
    const email = randomEmail();
    expect((await other.signUp(email)).statusCode).toBe(303);
    const fresh = new WebClient(t.app);
    expect((await fresh.logIn(email)).statusCode).toBe(303);
  });
});
