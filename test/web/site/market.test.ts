import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MARKET_LOOKS_PER_ADDRESS } from '../../../src/market/market-looks.ts';
import { createTestApp, TEST_BASE_URL, type TestApp } from '../../support/app.ts';
import { referencePercentile, usd } from '../../support/market-reference.ts';
import { f150Market } from '../../support/market-samples.ts';

/**
 * The website's Market page: the form, the figures for what a visitor picks (the report section's
 * partial), the curl call, and the free looks' limits. SQLite: the page has no database code of its
 * own (the market's queries run on both databases in test/web/report/report-market.test.ts).
 */
describe('the Market page', () => {
  let t: TestApp;
  let prices: number[];
  let visitor = 0;
  /** Each request from an address of its own: the per-second guard is another test's business. */
  const address = () => `198.51.100.${++visitor}`;

  beforeAll(async () => {
    t = await createTestApp('sqlite');
    const sample = f150Market(new Date(), 30);
    await t.repos.lots.upsertBatch([...sample.comparables, ...sample.vehicle]);
    prices = [...sample.comparables, ...sample.vehicle].filter((lot) => lot.year! >= 2018 && lot.year! <= 2020).map((lot) => lot.price!);
  });
  afterAll(async () => t?.close());

  it('asks for a make, model and year, linked from the site\'s navigation, with the API call that answers', async () => {
    const res = await t.app.inject({ url: '/market', remoteAddress: address() });
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('<a href="/market" aria-current="page">Market</a>');
    expect(res.body).toContain('<meta name="robots" content="index, follow">');
    for (const name of ['make', 'model', 'year', 'primary_damage']) expect(res.body).toContain(`name="${name}"`);
    expect(res.body).toContain(`${TEST_BASE_URL}/api/v1/market?make=HONDA&amp;model=ACCORD&amp;year=2020`);
    expect(res.body).not.toContain('<section class="market"');
    // Every page of the site links it.
    expect((await t.app.inject({ url: '/pricing' })).body).toContain('<a href="/market">Market</a>');
  });

  it('shows what similar cars sold for, whatever the spelling of the model, and the curl call of the same', async () => {
    const res = await t.app.inject({ url: '/market?make=Ford&model=F150&year=2019', remoteAddress: address() });
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('<meta name="robots" content="noindex, nofollow">');
    const section = res.body.slice(res.body.indexOf('<section class="market"'));
    // By make, model and year no VIN is left out: the vehicle's own two sales count too.
    expect(section).toContain(`<strong>${prices.length} similar sales</strong>`);
    expect(section).toContain(`<dd class="market__value"><bdi>${usd(referencePercentile(prices, 0.5))}</bdi></dd>`);
    expect(section).toContain('<svg class="market-chart"');
    expect(res.body).toContain(`${TEST_BASE_URL}/api/v1/market?make=Ford&amp;model=F150&amp;year=2019`);
    // The form keeps what was asked.
    expect(res.body).toContain('value="F150"');
  });

  it('says so when no similar car sold, and narrows by damage', async () => {
    const none = await t.app.inject({ url: '/market?make=Ford&model=F-150&year=1990', remoteAddress: address() });
    expect(none.statusCode).toBe(200);
    expect(none.body).toContain('<strong>0 similar sales</strong>');
    expect(none.body).toContain('No similar car was sold at auction in this period');
    const hail = await t.app.inject({ url: '/market?make=FORD&model=F-150&year=2019&primary_damage=hail', remoteAddress: address() });
    expect(hail.statusCode).toBe(200);
    expect(hail.body).toMatch(/<strong>\d+ similar sales?<\/strong>/);
    expect(hail.body).toContain('&amp;primary_damage=hail');
    const count = Number(/<strong>(\d+) similar sale/.exec(hail.body)![1]);
    expect(count).toBeGreaterThan(0);
    expect(count).toBeLessThan(prices.length);
  });

  it('names each empty field, and a bad one in the API\'s words (422), and asks nothing of the market', async () => {
    const empty = await t.app.inject({ url: '/market?make=&model=&year=&primary_damage=', remoteAddress: address() });
    expect(empty.statusCode).toBe(422);
    expect(empty.body).toContain('<a href="#market-make">Enter the make.</a>');
    expect(empty.body).toContain('<a href="#market-year">Enter the model year.</a>');
    expect(empty.body).toMatch(/id="market-model"[^>]*aria-invalid="true"/);
    const year = await t.app.inject({ url: '/market?make=Ford&model=F-150&year=19', remoteAddress: address() });
    expect(year.statusCode).toBe(422);
    expect(year.body).toContain('<a href="#market-year">The year must be a whole number from 1886 to 2100.</a>');
    expect(year.body).toContain('value="F-150"');
    expect(year.body).not.toContain('<section class="market"');
    // Longer than any field may be: refused by the route's schema before the page.
    expect((await t.app.inject({ url: `/market?make=${'x'.repeat(201)}`, remoteAddress: address() })).statusCode).toBe(400);
  });

  it('answers 429 with Retry-After once the day\'s free looks of an address are used', async () => {
    const visitorAddress = address();
    const now = new Date();
    for (let i = 0; i < MARKET_LOOKS_PER_ADDRESS.limit; i++) {
      const claim = { kind: MARKET_LOOKS_PER_ADDRESS.kind, subject: `ip:${visitorAddress}`, limit: MARKET_LOOKS_PER_ADDRESS.limit, since: new Date(now.getTime() - MARKET_LOOKS_PER_ADDRESS.windowMs) };
      expect(await t.repos.authAttempts.reserve([claim], new Date(now.getTime() - 60_000))).not.toBeNull();
    }
    const res = await t.app.inject({ url: '/market?make=Ford&model=F-150&year=2019', remoteAddress: visitorAddress });
    expect(res.statusCode).toBe(429);
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(23 * 3600);
    expect(res.body).toContain('You have used today’s 5 free looks from your network. The next one frees up in about 24 hours');
    expect(res.body).not.toContain('<section class="market"');
  });
});
