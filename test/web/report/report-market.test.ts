import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Lot } from '../../../src/domain/lot.ts';
import { translatorFor } from '../../../src/web/report/i18n.ts';
import { createTestApp, type TestApp } from '../../support/app.ts';
import { DIALECTS } from '../../support/databases.ts';
import { createCustomer, makeLot } from '../../support/fixtures.ts';
import { referencePercentile, usd } from '../../support/market-reference.ts';
import { f150Market } from '../../support/market-samples.ts';

const DAY = 24 * 60 * 60 * 1000;

/**
 * The report page's "What similar cars sold for" as of the report's time, and each sold lot against
 * the market before its sale, over real F-150 prices (test/support/market-samples.ts), held to a
 * reference computation. On both databases: the market's queries are the dialects' own.
 */
describe.each(DIALECTS)('the report page\'s market section on %s', (dialect) => {
  let t: TestApp;
  let reportPath: string;
  let reportJson: Record<string, unknown>;
  let comparables: Lot[];
  let vehicle: Lot[];
  /** Every lot stored, for the reference to choose comparables from by the contract's rule. */
  let stored: Lot[];
  let madeAt: number;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    const now = new Date();
    const sample = f150Market(now, 40);
    comparables = sample.comparables;
    vehicle = sample.vehicle;
    // Not comparables: another model, a model year two off, a sale before the window, no price.
    const noise = [
      makeLot({ vin: '1FMCU9GD5KUA00001', brand: 'FORD', model: 'ESCAPE', year: 2019, sale_date: new Date(now.getTime() - 20 * DAY).toISOString(), price: 99_000 }),
      makeLot({ vin: '1FTEW1EP0HFA00002', brand: 'FORD', model: 'F-150', year: 2017, sale_date: new Date(now.getTime() - 20 * DAY).toISOString(), price: 99_000 }),
      makeLot({ vin: '1FTEW1EP0KFA00003', brand: 'FORD', model: 'F-150', year: 2019, sale_date: new Date(now.getTime() - 400 * DAY).toISOString(), price: 99_000 }),
      makeLot({ vin: '1FTEW1EP0KFA00004', brand: 'FORD', model: 'F-150', year: 2019, sale_date: new Date(now.getTime() - 20 * DAY).toISOString(), price: null }),
    ];
    stored = [...comparables, ...vehicle, ...noise];
    await t.repos.lots.upsertBatch(stored);
    const customer = await createCustomer(t.repos, { rate: 1000 });
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/search', headers: { authorization: customer.token }, payload: { vin: vehicle[0]!.vin } });
    expect(res.statusCode).toBe(200);
    reportJson = res.json();
    reportPath = new URL(reportJson.report_url as string).pathname;
    madeAt = Date.parse(reportJson.origin_timestamp as string);
    // Sold after the report was made: the page, a snapshot, never counts it.
    await t.repos.lots.upsertBatch([makeLot({ ...comparables[0]!, vin: '1FTEW1EP0KFA00005', lot_id: comparables[0]!.lot_id + 900_000, sale_date: new Date(madeAt + 1).toISOString(), price: 1 })]);
  });
  afterAll(async () => t?.close());

  it('shows the count, the median, the spread and the range of the 12 months before the report', async () => {
    const res = await t.app.inject({ url: `${reportPath}?lang=en` });
    expect(res.statusCode).toBe(200);
    const html = res.body;
    const section = html.slice(html.indexOf('<section class="market"'), html.indexOf('<section class="lots"'));
    expect(section).toContain('<h2 id="market-title">What similar cars sold for</h2>');
    expect(section).toContain('<strong>40 similar sales</strong>');
    const prices = comparables.map((lot) => lot.price!);
    const figure = (p: number) => usd(referencePercentile(prices, p));
    expect(section).toContain(`<dd class="market__value"><bdi>${figure(0.5)}</bdi></dd>`);
    expect(section).toContain(`<bdi>${figure(0.25)} – ${figure(0.75)}</bdi>`);
    expect(section).toContain(`<bdi>${figure(0)} – ${figure(1)}</bdi>`);
    // The chart and its table; the closest sales, masked and linked to the auction.
    expect(section).toContain('<svg class="market-chart"');
    expect((section.match(/<rect class="market-chart__bar"/g) ?? []).length).toBeGreaterThan(3);
    const closest = [...section.matchAll(/<span class="market__vin" dir="ltr">([^<]+)<\/span>/g)].map((m) => m[1]!);
    expect(closest).toHaveLength(10);
    expect(closest.every((vin) => /^[0-9A-Z]{11}\*{6}$/.test(vin))).toBe(true);
    expect(section).toMatch(/<a href="https:\/\/www\.(copart\.com\/lot\/\d+|iaai\.com\/VehicleDetail\/\d+~US)" target="_blank" rel="noopener noreferrer">/);
    // Same model year first: the first closest sales are 2019s.
    expect(section.slice(section.indexOf('market__table--closest'))).toMatch(/<td><bdi>2019 FORD F-150<\/bdi>/);
  });

  it('says of each sold lot how its price compares with the market of the 12 months before its sale', async () => {
    const html = (await t.app.inject({ url: `${reportPath}?lang=en` })).body;
    const notes = [...html.matchAll(/<p class="lot__market">([^<]+)<\/p>/g)].map((m) => m[1]!);
    const expected = vehicle.map((lot) => {
      const sold = Date.parse(lot.sale_date!);
      // The contract's rule: other VINs, same make and model, model year within one, a price, sold in the 12 months up to this sale.
      const before = stored.filter(
        (other) =>
          other.vin !== lot.vin && other.model === 'F-150' && Math.abs(other.year! - 2019) <= 1 && (other.price ?? 0) > 0 &&
          Date.parse(other.sale_date!) <= sold && Date.parse(other.sale_date!) > sold - 365 * DAY,
      );
      const median = referencePercentile(before.map((other) => other.price!), 0.5);
      const percent = Math.round(((lot.price! - median) / median) * 100);
      const count = `${before.length} similar sale${before.length === 1 ? '' : 's'}`;
      return percent === 0
        ? `At the median of ${count} in the 12 months before this sale`
        : `${Math.abs(percent)}% ${percent < 0 ? 'below' : 'above'} the median of ${count} in the 12 months before this sale`;
    });
    expect(notes).toEqual(expected);
  });

  it('reads in Arabic, right to left, and keeps the Report JSON\'s shape', async () => {
    const html = (await t.app.inject({ url: `${reportPath}?lang=ar` })).body;
    expect(html).toContain('<html lang="ar" dir="rtl">');
    const ar = translatorFor('ar');
    expect(html).toContain(`<h2 id="market-title">${ar.t('market.title')}</h2>`);
    expect(html).toContain(ar.t('market.count', { count: 40 }));
    expect(Object.keys(reportJson).sort()).toEqual(['lots', 'origin_timestamp', 'report_url', 'status', 'vin']);
  });
});
