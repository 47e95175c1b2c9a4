import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DIALECTS } from '../../support/databases.ts';
import { createAccountTestApp, randomEmail, WebClient, type AccountTestApp } from '../../support/customer-app.ts';

const TEST_TOKEN = /vh_test_[0-9A-Za-z]{32}/g;
const LIVE_TOKEN = /vh_live_[0-9A-Za-z]{32}/g;
const SANDBOX_VIN = '4T1BF1FK7FU900011';

describe.each(DIALECTS)('the tokens page: test tokens (%s)', (dialect) => {
  let t: AccountTestApp;
  beforeAll(async () => {
    t = await createAccountTestApp(dialect);
  });
  afterAll(async () => {
    await t?.close();
  });

  async function signedUp() {
    const browser = new WebClient(t.app);
    const email = randomEmail();
    await browser.signUp(email);
    return { browser, account: (await t.repos.accounts.findByEmail(email))! };
  }

  test('offers the choice of a live or a test token, live by default', async () => {
    const { browser } = await signedUp();
    const page = await browser.get('/account/tokens');
    expect(page.statusCode).toBe(200);
    expect(page.body).toMatch(/<input type="radio" name="kind" value="live" checked>/);
    expect(page.body).toMatch(/<input type="radio" name="kind" value="test">/);
    expect(page.body).toContain('Test token');
    // Without a plan, the page says a test token works anyway.
    expect(page.body).toContain('A test token works without one.');
  });

  test('the test choice makes a vh_test_ token that searches the sandbox without a plan; its list row says Test', async () => {
    const { browser, account } = await signedUp();
    const created = await browser.createToken({ name: 'sandbox client', kind: 'test' });
    expect(created.statusCode).toBe(200);
    // The redirect's page still knows it is a test token (the flash carries the kind).
    expect(created.body).toContain('Test token created: sandbox client');
    expect(created.body).toContain('A test token searches only the sandbox catalogue');
    const shown = [...new Set(created.body.match(TEST_TOKEN))];
    expect(shown).toHaveLength(1);
    expect(created.body).not.toMatch(LIVE_TOKEN);
    const token = shown[0]!;
    const [row] = await t.repos.tokens.listForAccount(account.id);
    expect(row).toMatchObject({ name: 'sandbox client', kind: 'test', displayPrefix: token.slice(0, 12) });

    const search = await t.app.inject({ url: `/api/v1/search?vin=${SANDBOX_VIN}`, headers: { authorization: token } });
    expect(search.statusCode).toBe(200);
    const report = await t.app.inject({ url: new URL(search.json().report_url).pathname });
    expect(report.body).toContain('Test report');

    const list = await browser.get('/account/tokens');
    expect(list.body).toMatch(/sandbox client<\/strong> <span class="badge badge--test">Test<\/span>/);

    // Rotating a test token makes a test token.
    const rotated = await browser.follow(await browser.post(`/account/tokens/${row!.id}/rotate`));
    expect(rotated.statusCode).toBe(200);
    expect(rotated.body).toContain('Token rotated: sandbox client');
    expect(rotated.body).toContain('A test token searches only the sandbox catalogue');
    expect([...new Set(rotated.body.match(TEST_TOKEN))]).toHaveLength(1);
    expect(rotated.body).not.toMatch(LIVE_TOKEN);
  });

  test('a form without the choice, or with an unknown one, makes a live token; a refused name keeps the choice', async () => {
    const { browser } = await signedUp();
    for (const form of [{ name: 'plain' }, { name: 'odd', kind: 'sandbox' }]) {
      const created = await browser.createToken(form);
      expect(created.body).toMatch(LIVE_TOKEN);
      expect(created.body).not.toMatch(TEST_TOKEN);
      expect(created.body).toContain(`Token created: ${form.name}`);
    }
    await browser.get('/account/tokens');
    const refused = await browser.post('/account/tokens', { name: '', kind: 'test' });
    expect(refused.statusCode).toBe(422);
    expect(refused.body).toMatch(/<input type="radio" name="kind" value="test" checked>/);
  });
});
