import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { makeLot } from '../../support/fixtures.ts';
import { createAccountTestApp, type AccountTestApp } from '../../support/customer-app.ts';

const VIN = '4JGBF7BE5AA585531';

describe('landing and pricing pages', () => {
  let t: AccountTestApp;
  beforeAll(async () => {
    t = await createAccountTestApp('sqlite');
    await t.repos.lots.upsertBatch([
      makeLot({ vin: VIN, auction: 'copart', sale_date: '2024-03-14T18:00:00.000Z', images: ['https://img.test/1.jpg', 'https://img.test/2.jpg'] }),
      makeLot({ vin: VIN, auction: 'iaai', sale_date: '2022-08-02T15:30:00.000Z' }),
    ]);
  });
  afterAll(async () => {
    await t?.close();
  });

  test('the landing page says what the API does, links the docs and pricing, and is indexable', async () => {
    const res = await t.app.inject({ url: '/', remoteAddress: '192.0.2.1' });
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('Every auction a car has been through, from one VIN');
    expect(res.body).toContain('What a report contains');
    expect(res.body).toContain('href="/docs"');
    expect(res.body).toContain('href="/pricing"');
    expect(res.body).toContain('Plans from $50 a month');
    expect(res.body).toContain('<meta name="robots" content="index, follow">');
    // Anonymous visitors of a page without forms get no cookie.
    expect(res.headers['set-cookie']).toBeUndefined();
  });

  test('the VIN box: records found, none found, or what is wrong with the VIN', async () => {
    const found = await t.app.inject({ url: `/?vin=${VIN.toLowerCase()}`, remoteAddress: '192.0.2.2' });
    expect(found.body).toContain('<strong>2 auction records</strong> for <span class="mono">4JGBF7BE5AA585531</span>');
    expect(found.body).toContain('From Copart and IAAI, last sold Mar 14, 2024, with 2 photos.');
    expect(found.body).toContain('<meta name="robots" content="noindex, nofollow">');
    // The records themselves are not on the page; the next step to them is.
    expect(found.body).not.toContain('img.test');
    expect(found.body).toContain('<a class="button button--small" href="/pricing">Get the full report<span class="visually-hidden"> for 4JGBF7BE5AA585531</span></a>');
    const none = await t.app.inject({ url: '/?vin=1HGCM82633A004352', remoteAddress: '192.0.2.3' });
    expect(none.body).toContain('No auction records yet');
    expect(none.body).not.toContain('Get the full report');
    const bad = await t.app.inject({ url: '/?vin=1HGCM82633A004353', remoteAddress: '192.0.2.4' });
    expect(bad.body).toMatch(/The VIN check digit \(position 9\) is 3, but this VIN requires [0-9X]\./);
    expect(bad.body).toContain('aria-invalid="true"');
    expect(bad.body).toContain('aria-describedby="vin-hint vin-error"');
    const tooLong = await t.app.inject({ url: `/?vin=${'A'.repeat(301)}`, remoteAddress: '192.0.2.5' });
    expect(tooLong.statusCode).toBe(400);
    expect(tooLong.headers['content-type']).toMatch(/text\/html/);
  });

  test('the VIN box allows 2 checks a second per address', async () => {
    const codes = [];
    for (let i = 0; i < 3; i++) codes.push((await t.app.inject({ url: `/?vin=${VIN}`, remoteAddress: '192.0.2.9' })).body.includes('Too many checks at once'));
    expect(codes).toEqual([false, false, true]);
    expect((await t.app.inject({ url: `/?vin=${VIN}`, remoteAddress: '192.0.2.10' })).body).toContain('2 auction records');
  });

  test('pricing: the contract’s plans, Standard the favourite, monthly and annual prices with the discount where it applies', async () => {
    const monthly = await t.app.inject({ url: '/pricing' });
    expect(monthly.statusCode).toBe(200);
    const names = [...monthly.body.matchAll(/<h2 class="plan__name" id="plan-(\w+)">([^<]+)<\/h2>/g)].map((m) => [m[1], m[2]]);
    expect(names).toEqual([['standard', 'Standard'], ['professional', 'Professional'], ['vip', 'VIP']]);
    const amounts = (html: string) => [...html.matchAll(/<span class="plan__amount">([^<]+)<\/span>/g)].map((m) => m[1]);
    expect(amounts(monthly.body)).toEqual(['$50', '$150', '$400']);
    expect(monthly.body).toMatch(/<li class="plan plan--favourite">\s*<article aria-labelledby="plan-standard">\s*<p class="plan__badge">Most popular<\/p>/);
    expect(monthly.body.match(/plan--favourite/g)).toHaveLength(1);
    expect(monthly.body).toContain('Or $600 a year<');
    expect(monthly.body).toContain('Or $1,440 a year: save 20%');
    expect(monthly.body).toContain('Or $3,840 a year: save 20%');
    const annual = await t.app.inject({ url: '/pricing?billing=annual' });
    expect(amounts(annual.body)).toEqual(['$600', '$1,440', '$3,840']);
    expect(annual.body).toContain('Billed yearly ($50 × 12)');
    expect(annual.body).toContain('$120 a month, billed yearly: 20% less than monthly');
    // A visitor who is not logged in goes to sign-up first, which comes back to the choice.
    expect(annual.body).toContain(`href="/signup?next=${encodeURIComponent('/account/billing?plan=vip&billing=annual')}"`);
    // The price of a search at each plan's full quota, and the real token limit.
    expect(monthly.body).toContain('<strong>$0.05</strong> per search');
    expect(monthly.body).toContain('<strong>$0.03</strong> per search');
    expect(monthly.body).toContain('<strong>$0.027</strong> per search');
    expect(monthly.body).toContain('Up to 25 API tokens');
    expect(monthly.body).not.toContain('Unlimited');
    expect(annual.body).toContain('By bank transfer, against an invoice in your account.');
    // Custom (enterprise) plans are not on the public price list.
    await t.repos.plans.create({ code: 'acme-private', name: 'Acme Private', monthlyQuota: 9, ratePerSecond: 1, monthlyPriceCents: 1 });
    expect((await t.app.inject({ url: '/pricing' })).body).not.toContain('Acme Private');
  });

  test('the site navigation links the docs; the report and 404 pages keep their own look', async () => {
    const pricing = await t.app.inject({ url: '/pricing' });
    expect(pricing.body).toContain('<nav class="site-nav" aria-label="Site">');
    expect(pricing.body).toContain('href="/login"');
    const missing = await t.app.inject({ url: '/no-such-page' });
    expect(missing.statusCode).toBe(404);
    expect(missing.body).toContain('href="/account">Account</a>');
  });
});
