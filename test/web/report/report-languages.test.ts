import { randomUUID } from 'node:crypto';
import { IntlMessageFormat } from 'intl-messageformat';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPORT_LANGUAGES } from '../../../src/domain/report-language.ts';
import { displayCase, GLOSSARY_CATEGORIES, readCatalogue, translatorFor } from '../../../src/web/report/i18n.ts';
import { acceptedLanguages, chooseLanguage, choosePaper } from '../../../src/web/report/language.ts';
import { createTestApp, type TestApp } from '../../support/app.ts';
import { DIALECTS } from '../../support/databases.ts';
import { createCustomer, makeLot, validVin, type Customer } from '../../support/fixtures.ts';

const english = readCatalogue('en');

describe('report catalogues', () => {
  it.each(REPORT_LANGUAGES)('%s has every message and glossary term of English, each parsing as ICU with its plural forms', (language) => {
    const catalogue = readCatalogue(language);
    expect(Object.keys(catalogue.messages).sort()).toEqual(Object.keys(english.messages).sort());
    for (const category of GLOSSARY_CATEGORIES) {
      expect(Object.keys(catalogue.glossary[category]).sort(), category).toEqual(Object.keys(english.glossary[category]).sort());
    }
    const categories = new Intl.PluralRules(language).resolvedOptions().pluralCategories;
    for (const [key, source] of Object.entries(catalogue.messages)) {
      expect(() => new IntlMessageFormat(source, language), key).not.toThrow();
      // Same placeholders as English, so no value is lost or invented in translation.
      const names = (text: string) => [...new Set([...text.matchAll(/\{(\w+)[,}]/g)].map((m) => m[1]))].sort();
      expect(names(source), key).toEqual(names(english.messages[key]!));
      for (const plural of source.matchAll(/\{\w+, plural, (.*)\}/g)) {
        for (const category of categories) expect(plural[1], `${key}: ${category}`).toMatch(new RegExp(`(^|\\s|\\})${category} \\{`));
      }
    }
  });

  it('formats plurals, numbers and dates in each language', () => {
    expect(translatorFor('en').t('report.lotCount', { count: 1 })).toBe('1 auction lot');
    expect(translatorFor('uk').t('report.lotCount', { count: 3 })).toBe('3 аукціонні лоти');
    expect(translatorFor('uk').t('report.lotCount', { count: 5 })).toBe('5 аукціонних лотів');
    expect(translatorFor('pl').t('report.lotCount', { count: 22 })).toBe('22 aukcje');
    expect(translatorFor('ar').t('report.lotCount', { count: 2 })).toBe('قطعتا مزاد');
    expect(translatorFor('en').formatMoney(12345)).toBe('$12,345');
    expect(translatorFor('uk').formatMoney(12345)).toBe('12\u00a0345\u00a0USD');
    expect(translatorFor('es').formatMiles(172691)).toBe('172.691 mi');
    expect(translatorFor('ru').formatDate('2024-03-14T18:00:00.000Z')).toBe('14 мар. 2024 г.');
  });

  it('translates the auctions\' words where the glossary knows them, and shows the rest evened out', () => {
    const uk = translatorFor('uk');
    expect(uk.term('damage', 'FRONT END')).toEqual({ text: 'Передня частина', untranslated: false });
    expect(uk.term('damage', 'WATER/FLOOD')).toEqual({ text: 'Вода/повінь', untranslated: false });
    expect(uk.term('document', 'SC - SALVAGE CERTIFICATE (CA)')).toEqual({ text: 'Сертифікат salvage (після аварії) (CA)', untranslated: false });
    expect(uk.term('damage', 'STRANGE NEW DAMAGE')).toEqual({ text: 'Strange new damage', untranslated: true });
    expect(translatorFor('en').term('damage', 'MINOR DENT/SCRATCHES')).toEqual({ text: 'Minor dents/scratches', untranslated: false });
    expect(displayCase('FRONT END')).toBe('Front end');
    expect(displayCase('4DR SPOR')).toBe('4DR spor');
    expect(displayCase('CVT (CA)')).toBe('CVT (CA)');
    expect(displayCase('Run & Drive Verified')).toBe('Run & Drive Verified');
  });
});

describe('report language choice', () => {
  it('takes ?lang, then the account default, then Accept-Language, then English', () => {
    expect(chooseLanguage({ query: 'ka', accountDefault: 'uk', acceptLanguage: 'ru' })).toBe('ka');
    expect(chooseLanguage({ query: 'xx', accountDefault: 'uk', acceptLanguage: 'ru' })).toBe('uk');
    expect(chooseLanguage({ query: undefined, accountDefault: null, acceptLanguage: 'de-DE,de;q=0.9,ro;q=0.8,en;q=0.5' })).toBe('ro');
    expect(chooseLanguage({ query: undefined, accountDefault: null, acceptLanguage: 'de-DE,fr;q=0.9' })).toBe('en');
    expect(chooseLanguage({ query: undefined, accountDefault: null, acceptLanguage: undefined })).toBe('en');
    expect(acceptedLanguages('en;q=0.1, ar-AE, uk;q=0')).toEqual(['ar-ae', 'en']);
  });

  it('prints on Letter for readers in Letter countries and A4 elsewhere', () => {
    expect(choosePaper(undefined, 'en-US,en;q=0.9')).toBe('letter');
    expect(choosePaper(undefined, 'es-MX')).toBe('letter');
    expect(choosePaper(undefined, 'en-GB')).toBe('a4');
    expect(choosePaper(undefined, 'uk')).toBe('a4');
    expect(choosePaper('letter', 'uk')).toBe('letter');
  });
});

describe.each(DIALECTS)('report page languages on %s', (dialect) => {
  let t: TestApp;
  let customer: Customer;
  let reportPath: string;
  const vin = validVin('1FTFW1ET5DFC7777');

  beforeAll(async () => {
    t = await createTestApp(dialect);
    customer = await createCustomer(t.repos, { rate: 1000 });
    await t.repos.lots.upsertBatch([
      makeLot({ vin, auction: 'copart', lot_id: 41000001, sale_date: '2024-06-12T15:30:00.000Z', name: '2013 FORD F-150', year: 2013, price: 12345, odometer: 150000, odometer_type: 'NOT ACTUAL', primary_damage: 'WATER/FLOOD', document: 'SC - SALVAGE CERTIFICATE (TX)', keys: 'NO', images: ['https://cs.copart.com/1.jpg'] }),
      makeLot({ vin, auction: 'iaai', lot_id: 35000002, sale_date: '2024-01-05T00:00:00.000Z', price: 3100, odometer: 172691, primary_damage: 'Something Unmapped' }),
      makeLot({ vin, auction: 'copart', lot_id: 41000003 }),
    ]);
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/search', headers: { authorization: customer.token }, payload: { vin } });
    reportPath = new URL(res.json().report_url as string).pathname;
  });
  afterAll(async () => t?.close());

  it.each(REPORT_LANGUAGES)('renders the report in %s with no missing word', async (language) => {
    const res = await t.app.inject({ url: `${reportPath}?lang=${language}` });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-language']).toBe(language);
    const html = res.body;
    expect(html).toContain(`<html lang="${language}" dir="${language === 'ar' ? 'rtl' : 'ltr'}">`);
    // No message key, placeholder or unknown value in the text (the asset links aside).
    const text = html.replace(/<(script|link)\b[^>]*>/g, '');
    expect(text).not.toMatch(/\b(null|undefined|NaN)\b|\{[a-z]+\}|\b(report|flags?|lot|figure|photos|field|timeline)\.[a-zA-Z-]+\b/);
    // Red flags come first, before the lots, and the timeline has its table.
    expect(html.indexOf('class="flags flags--raised"')).toBeGreaterThan(0);
    expect(html.indexOf('class="flags flags--raised"')).toBeLessThan(html.indexOf('class="lots"'));
    expect(html).toContain('<svg class="timeline__chart"');
    expect(html).toContain('<table class="timeline__table">');
    // The unmapped damage is shown as written, marked as English.
    expect(html).toContain(language === 'en' ? '<bdi>Something Unmapped</bdi>' : '<dd lang="en"><bdi>Something Unmapped</bdi></dd>');
    const t9n = translatorFor(language);
    for (const key of ['flags.title', 'flag.title-salvage', 'flag.damage-flood', 'flag.keys-missing', 'lot.upcoming', 'figure.price']) expect(html).toContain(t9n.t(key));
    expect(html).toContain(t9n.formatMoney(12345)!);
  });

  it('chooses the account default, then Accept-Language, and links every language', async () => {
    const byHeader = await t.app.inject({ url: reportPath, headers: { 'accept-language': 'pl-PL,pl;q=0.9,en;q=0.5' } });
    expect(byHeader.body).toContain('<html lang="pl" dir="ltr">');
    expect(byHeader.headers.vary).toMatch(/accept-language/);
    for (const language of REPORT_LANGUAGES) expect(byHeader.body).toContain(`href="?lang=${language}"`);

    await t.repos.accounts.setDefaultLanguage(customer.accountId, 'ka');
    const byAccount = await t.app.inject({ url: reportPath, headers: { 'accept-language': 'pl' } });
    expect(byAccount.body).toContain('<html lang="ka" dir="ltr">');
    const byQuery = await t.app.inject({ url: `${reportPath}?lang=ar`, headers: { 'accept-language': 'pl' } });
    expect(byQuery.body).toContain('<html lang="ar" dir="rtl">');
    await t.repos.accounts.setDefaultLanguage(customer.accountId, null);
    expect((await t.app.inject({ url: reportPath })).body).toContain('<html lang="en" dir="ltr">');
  });

  it('shows anonymous readers of our reports a quiet link to get reports like this', async () => {
    const anonymous = await t.app.inject({ url: reportPath });
    expect(anonymous.body).toContain('class="report-footer__cta"');
    const customerView = await t.app.inject({ url: reportPath, headers: { cookie: 'vh_session=abc' } });
    expect(customerView.body).not.toContain('class="report-footer__cta"');
    expect((await t.app.inject({ url: `/report/${randomUUID()}?lang=uk` })).statusCode).toBe(404);
  });
});
