import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DIALECTS } from '../../support/databases.ts';
import { createAccountTestApp, randomEmail, WebClient, type AccountTestApp } from '../../support/customer-app.ts';

const TEST_TOKEN = /vh_test_[0-9A-Za-z]{32}/;
const SANDBOX_VIN = '4T1BF1FK7FU900011';

/** The account settings' "Report language": the language a report opens in when its link does not name one. */
describe.each(DIALECTS)('the report language setting (%s)', (dialect) => {
  let t: AccountTestApp;
  beforeAll(async () => {
    t = await createAccountTestApp(dialect);
  });
  afterAll(async () => {
    await t?.close();
  });

  /** A signed-up account with a report of its own (a test token's search: no plan needed). */
  async function accountWithReport() {
    const browser = new WebClient(t.app);
    await browser.signUp(randomEmail());
    const token = TEST_TOKEN.exec((await browser.createToken({ name: 'site', kind: 'test' })).body)![0];
    const search = await t.app.inject({ url: `/api/v1/search?vin=${SANDBOX_VIN}`, headers: { authorization: token } });
    expect(search.statusCode).toBe(200);
    return { browser, reportPath: new URL(search.json().report_url as string).pathname };
  }

  const langOf = (html: string) => /<html lang="([^"]+)" dir="([^"]+)"/.exec(html)?.slice(1, 3);
  const selected = (html: string) => /<option value="([^"]*)" selected>/.exec(html)?.[1];

  test('set to Ukrainian, a report opens in Ukrainian without ?lang, whatever the reader’s browser says; ?lang still wins', async () => {
    const { browser, reportPath } = await accountWithReport();
    const read = (acceptLanguage: string, query = '') => t.app.inject({ url: `${reportPath}${query}`, headers: { 'accept-language': acceptLanguage } });
    // Not set: the reader's browser decides.
    expect(selected((await browser.get('/account/settings')).body)).toBe('');
    expect(langOf((await read('es-ES,es;q=0.9')).body)).toEqual(['es', 'ltr']);

    const saved = await browser.post('/account/settings/report-language', { default_language: 'uk' });
    expect(saved.statusCode).toBe(303);
    expect(saved.headers.location).toBe('/account/settings?done=language-saved');
    const settings = await browser.get('/account/settings?done=language-saved');
    expect(selected(settings.body)).toBe('uk');
    expect(settings.body).toContain('Your reports&#39; language is saved.');

    const page = await read('es-ES,es;q=0.9');
    expect(page.statusCode).toBe(200);
    expect(langOf(page.body)).toEqual(['uk', 'ltr']);
    expect(page.headers['content-language']).toBe('uk');
    expect(page.body).toContain('Тестовий звіт');
    expect(langOf((await read('es-ES', '?lang=ar')).body)).toEqual(['ar', 'rtl']);
    // The PDF link of the page names the account's language, so the PDF is in it too.
    expect((await t.app.inject({ url: `${reportPath}.pdf?paper=a4`, headers: { 'accept-language': 'es' } })).headers.location).toBe(`${reportPath}.pdf?lang=uk&paper=a4`);

    // Back to the reader's browser.
    await browser.post('/account/settings/report-language', { default_language: '' });
    expect(selected((await browser.get('/account/settings')).body)).toBe('');
    expect(langOf((await read('pl-PL,pl;q=0.9')).body)).toEqual(['pl', 'ltr']);
  });

  test('a language it does not offer is refused with the field named, and the saved one stays', async () => {
    const { browser, reportPath } = await accountWithReport();
    await browser.get('/account/settings');
    await browser.post('/account/settings/report-language', { default_language: 'ka' });
    for (const value of ['xx', 'de', 'uk'.repeat(20)]) {
      const refused = await browser.post('/account/settings/report-language', { default_language: value });
      expect(refused.statusCode).toBe(422);
      expect(refused.body).toContain('id="settings-default_language-error"');
    }
    expect(langOf((await t.app.inject({ url: reportPath, headers: { 'accept-language': 'en' } })).body)).toEqual(['ka', 'ltr']);
  });
});
