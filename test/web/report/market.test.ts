import { describe, expect, it } from 'vitest';
import type { MarketValue } from '../../../src/domain/market.ts';
import { REPORT_LANGUAGES } from '../../../src/domain/report-language.ts';
import { translatorFor } from '../../../src/web/report/i18n.ts';
import { auctionLotUrl, compareWithMarket, maskVin, presentMarket, windowMonths } from '../../../src/web/report/market.ts';
import { makeLot } from '../../support/fixtures.ts';

/** The contract's example figures, with three months of sales and two closest lots. */
function sample(overrides: Partial<MarketValue> = {}): MarketValue {
  return {
    vehicle: { make: 'HONDA', model: 'ACCORD', year: 2020 },
    window: { from: '2025-11-26T00:00:00.000Z', to: '2026-11-26T10:00:00.000Z' },
    comparables: { count: 42, price: { min: 900, p25: 4100, median: 5200, p75: 6900, max: 15200 }, share_of_retail_value: { median: 0.27 } },
    by_damage: [
      { primary_damage: 'FRONT END', count: 18, median_price: 5600 },
      { primary_damage: 'STRANGE NEW DAMAGE', count: 3, median_price: 2100 },
    ],
    by_month: [
      { month: '2025-12', count: 5, median_price: 4800 },
      { month: '2026-04', count: 30, median_price: 5300 },
      { month: '2026-10', count: 7, median_price: 5000 },
    ],
    closest: [
      makeLot({ vin: '1HGCV1F34LA000001', auction: 'copart', lot_id: 41000001, year: 2020, brand: 'HONDA', model: 'ACCORD', sale_date: '2026-10-02T00:00:00.000Z', price: 5100, odometer: 40210, primary_damage: 'FRONT END' }),
      makeLot({ vin: '1HGCV1F34LA000002', auction: 'manheim', lot_id: 77, year: 2021, brand: 'HONDA', model: 'ACCORD', sale_date: null, price: null, odometer: null, primary_damage: null }),
    ],
    ...overrides,
  };
}

const EMPTY: MarketValue = sample({
  comparables: { count: 0, price: { min: null, p25: null, median: null, p75: null, max: null }, share_of_retail_value: { median: null } },
  by_damage: [],
  by_month: [],
  closest: [],
});

describe('presentMarket', () => {
  it('writes the figures, the window and the closest sales in the reader\'s language', () => {
    const view = presentMarket(sample(), translatorFor('en'));
    expect(view.title).toBe('What similar cars sold for');
    expect(view.lead).toBe('Auction sales of other HONDA ACCORD vehicles from the years 2019 to 2021, sold between Nov 26, 2025 and Nov 26, 2026.');
    expect(view.count).toBe('42 similar sales');
    expect(view.empty).toBeNull();
    expect(view.figures.map((figure) => figure.value)).toEqual(['$5,200', '$4,100 – $6,900', '$900 – $15,200', '27%']);
    expect(view.byDamage!.rows).toEqual([
      { damage: { text: 'Front end', untranslated: false }, count: '18', median: '$5,600' },
      { damage: { text: 'Strange new damage', untranslated: false }, count: '3', median: '$2,100' },
    ]);
    const [first, second] = view.closest!.rows;
    expect(first).toEqual({
      vehicle: '2020 HONDA ACCORD',
      lot: 'Copart lot 41000001',
      href: 'https://www.copart.com/lot/41000001',
      maskedVin: '1HGCV1F34LA******',
      date: 'Oct 2, 2026',
      datetime: '2026-10-02T00:00:00.000Z',
      price: '$5,100',
      odometer: '40,210 mi',
      damage: { text: 'Front end', untranslated: false },
    });
    // An auction without a known lot address gets no link; unknown values stay null for the dash.
    expect(second).toMatchObject({ href: null, date: null, price: null, odometer: null, damage: null });
  });

  it('translates, and marks the auction\'s words it has no translation for', () => {
    const view = presentMarket(sample(), translatorFor('uk'));
    expect(view.count).toBe('42 схожі продажі');
    expect(view.figures[0]!.value).toBe('5\u00a0200\u00a0USD');
    expect(view.byDamage!.rows.map((row) => row.damage)).toEqual([
      { text: 'Передня частина', untranslated: false },
      { text: 'Strange new damage', untranslated: true },
    ]);
  });

  it('draws one bar per month with sales on the window\'s months, left to right, and right to left in Arabic', () => {
    const ltr = presentMarket(sample(), translatorFor('en')).chart!;
    // Nov 2025 to Nov 2026: 13 month slots, three with sales.
    expect(ltr.bars).toHaveLength(3);
    const xs = ltr.bars.map((bar) => bar.x);
    expect(xs).toEqual([...xs].sort((a, b) => a - b));
    expect(ltr.bars.every((bar) => bar.x >= ltr.plot.left && bar.x + bar.width <= ltr.plot.right)).toBe(true);
    // The highest median is the tallest bar, and every bar stands on the baseline.
    expect(Math.min(...ltr.bars.map((bar) => bar.y))).toBe(ltr.bars[1]!.y);
    for (const bar of ltr.bars) expect(bar.y + bar.height).toBeCloseTo(ltr.plot.bottom, 5);
    expect(ltr.bars[1]!.label).toBe('Apr 2026: median $5,300, 30 sales');
    expect(ltr.bars.map((bar) => bar.count)).toEqual(['5', '30', '7']);
    expect(ltr.median!.label).toBe('median $5,200');
    // The latest month is always labelled, ending at the chart's edge rather than running past it.
    expect(ltr.monthTicks.at(-1)).toEqual({ label: 'Nov 2026', anchor: 'end', at: ltr.plot.right });
    expect(ltr.priceLabelX).toBeLessThan(ltr.plot.left);
    expect(ltr.rows).toEqual([
      { month: 'Dec 2025', count: '5', median: '$4,800' },
      { month: 'Apr 2026', count: '30', median: '$5,300' },
      { month: 'Oct 2026', count: '7', median: '$5,000' },
    ]);

    const rtl = presentMarket(sample(), translatorFor('ar')).chart!;
    const rxs = rtl.bars.map((bar) => bar.x);
    expect(rxs).toEqual([...rxs].sort((a, b) => b - a));
    expect(rtl.priceLabelX).toBeGreaterThan(rtl.plot.right);
    expect(rtl.monthTicks.at(-1)).toMatchObject({ anchor: 'end', at: rtl.plot.left });
    // Mirrored: the same bar, measured from the other edge of the chart.
    expect(rtl.bars[0]!.x + rtl.bars[0]!.width).toBeCloseTo(ltr.width - ltr.bars[0]!.x, 5);
  });

  it('leaves the counts off bars too narrow for them (a 36-month window)', () => {
    const view = presentMarket(sample({ window: { from: '2023-11-26T00:00:00.000Z', to: '2026-11-26T10:00:00.000Z' } }), translatorFor('en'));
    expect(view.chart!.bars.every((bar) => bar.count === null)).toBe(true);
    expect(view.chart!.monthTicks.length).toBeLessThanOrEqual(6);
  });

  it('says so when there are no comparables, with no chart, table or closest sales', () => {
    const view = presentMarket(EMPTY, translatorFor('en'));
    expect(view.count).toBe('0 similar sales');
    expect(view.empty).toMatch(/^No similar car was sold/);
    expect(view.chart).toBeNull();
    expect(view.byDamage).toBeNull();
    expect(view.closest).toBeNull();
    expect(view.figures.every((figure) => figure.value === null)).toBe(true);
  });

  it.each(REPORT_LANGUAGES)('writes every message in %s', (language) => {
    const t = translatorFor(language);
    const view = presentMarket(sample(), t);
    const text = JSON.stringify(view);
    expect(text).not.toMatch(/market\.[a-zA-Z]+|\{[a-z]+\}|undefined|NaN/);
    expect(compareWithMarket(4264, sample(), t)).not.toBeNull();
  });
});

describe('compareWithMarket', () => {
  const en = translatorFor('en');
  it('says how far a price is from the median, in whole percents', () => {
    expect(compareWithMarket(4264, sample(), en)).toBe('18% below the median of 42 similar sales in the 12 months before this sale');
    expect(compareWithMarket(6500, sample(), en)).toBe('25% above the median of 42 similar sales in the 12 months before this sale');
    // 5,220 is 0.38% above: under half a percent reads as at the median.
    expect(compareWithMarket(5220, sample(), en)).toBe('At the median of 42 similar sales in the 12 months before this sale');
    expect(compareWithMarket(5200, sample({ comparables: { ...sample().comparables, count: 1 } }), en)).toBe('At the median of 1 similar sale in the 12 months before this sale');
    expect(compareWithMarket(4264, sample(), translatorFor('ru'))).toBe('На 18\u00a0% ниже медианы 42 похожих продаж за 12 месяцев до этой продажи');
  });

  it('says nothing without a price or without comparables', () => {
    expect(compareWithMarket(null, sample(), en)).toBeNull();
    expect(compareWithMarket(0, sample(), en)).toBeNull();
    expect(compareWithMarket(4000, EMPTY, en)).toBeNull();
    expect(compareWithMarket(4000, null, en)).toBeNull();
  });
});

describe('market helpers', () => {
  it('lists the window\'s months, both ends included', () => {
    expect(windowMonths('2025-11-26T00:00:00.000Z', '2026-02-01T00:00:00.000Z')).toEqual(['2025-11', '2025-12', '2026-01', '2026-02']);
    expect(windowMonths('2026-03-01T00:00:00.000Z', '2026-03-31T23:59:59.999Z')).toEqual(['2026-03']);
  });

  it('masks a VIN as the auctions do and links the lots of the auctions with known pages', () => {
    expect(maskVin('5N1DL0MM5KC123456')).toBe('5N1DL0MM5KC******');
    expect(auctionLotUrl('iaai', 35000002)).toBe('https://www.iaai.com/VehicleDetail/35000002~US');
    expect(auctionLotUrl('manheim', 1)).toBeNull();
  });
});
