import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Lot } from '../../../src/domain/lot.ts';
import {
  cleanText,
  formatAuction,
  formatDate,
  formatDateTime,
  formatMiles,
  formatMoney,
} from '../../../src/web/format.ts';
import { presentReport, reportTitle } from '../../../src/web/report/present.ts';
import { createTestApp, type TestApp } from '../../support/app.ts';
import { DIALECTS } from '../../support/databases.ts';
import { createCustomer, makeLot, validVin, type Customer } from '../../support/fixtures.ts';

describe.each(DIALECTS)('report page on %s', (dialect) => {
  let t: TestApp;
  let customer: Customer;
  const vin = validVin('1FTFW1ET5DFC7777');

  const newestLot = makeLot({
    vin,
    auction: 'copart',
    lot_id: 41000001,
    sale_date: '2024-06-12T15:30:00.000Z',
    name: '2013 FORD F-150 SUPERCREW',
    year: 2013,
    brand: 'FORD',
    model: 'F-150',
    price: 12345,
    odometer: 172691,
    odometer_type: 'actual',
    retail_value: 23456,
    repair_cost: 7890,
    primary_damage: 'FRONT END',
    highlight: '<script>alert("owned")</script>',
    keys: 'YES',
    document: 'SALVAGE CERTIFICATE (TX)',
    location: 'DALLAS',
    location_zip: '75201',
    engine: '3.5L  6',
    cylinders: 6,
    transmission: 'AUTOMATIC',
    drive: '4x4',
    fuel: 'GAS',
    body: 'CREW PICKUP',
    color: 'BLUE',
    images: ['https://cs.copart.com/v1/41000001/1.jpg', 'https://cs.copart.com/v1/41000001/2.jpg?w=1&h=2'],
  });
  const olderLot = makeLot({ vin, auction: 'iaai', lot_id: 35000002, sale_date: '2022-01-05T00:00:00.000Z', price: 3100 });
  const undatedLot = makeLot({ vin, auction: 'copart', lot_id: 41000003, images: ['javascript:alert(1)'] });

  const search = async () => {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/search', headers: { authorization: customer.token }, payload: { vin } });
    expect(res.statusCode).toBe(200);
    return new URL(res.json().report_url as string).pathname;
  };

  beforeAll(async () => {
    t = await createTestApp(dialect);
    // A plan of its own: several searches in one test must not meet the per-second rate.
    customer = await createCustomer(t.repos, { rate: 1000 });
    await t.repos.lots.upsertBatch([undatedLot, olderLot, newestLot]);
  });
  afterAll(async () => t?.close());

  it('renders the report of a search as an HTML page with every lot, upcoming first, then newest first', async () => {
    const res = await t.app.inject({ url: await search() });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers['x-robots-tag']).toBe('noindex, nofollow');
    const html = res.body;

    expect(html).toMatch(/^<!doctype html>\s*<html lang="en" dir="ltr">/);
    expect(html).toContain('<meta name="robots" content="noindex, nofollow">');
    expect(html).toContain('<meta name="viewport" content="width=device-width, initial-scale=1">');
    expect(html).toMatch(/<link rel="stylesheet" href="\/assets\/app\.css\?v=[0-9a-f]{10}">/);
    expect(html).toContain(`<title>2013 FORD F-150 SUPERCREW · VIN ${vin} · auction history · vinhistory</title>`);
    expect(html).toContain(`<h1 id="report-title"><bdi>2013 FORD F-150 SUPERCREW</bdi></h1>`);
    expect(html).toContain(`<span class="vin__value">${vin}</span>`);
    expect(html).toContain('<main id="main"');
    expect(html).toContain('3 auction lots');

    // The upcoming lot (no sale date) first and labelled, then the newest sale first.
    const positions = ['Lot 41000003', 'Lot 41000001', 'Lot 35000002'].map((label) => html.indexOf(label));
    expect(positions.every((position) => position > 0)).toBe(true);
    expect(positions).toEqual([...positions].sort((a, b) => a - b));

    for (const text of ['$12,345', '$23,456', '$7,890', '$3,100', '172,691 mi', 'Jun 12, 2024', 'Jan 5, 2022', 'No sale date yet', '<span class="lot__upcoming">Upcoming</span>']) {
      expect(html).toContain(text);
    }
    expect(html).toContain('<dt>Location</dt><dd><bdi>Dallas, 75201</bdi></dd>');
    expect(html).toContain('<dt>Engine</dt><dd><bdi>3.5L 6</bdi></dd>');
    // Display casing is evened out on the page (the JSON keeps the auction's words).
    expect(html).toContain('<dt>Title document</dt><dd><bdi>Salvage certificate (TX)</bdi></dd>');
    expect(html).toContain('<dt>Primary damage</dt><dd><bdi>Front end</bdi></dd>');
    expect(html).toMatch(/Report made at <time datetime="\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z">\w{3} \d{1,2}, \d{4}, \d{2}:\d{2} UTC<\/time>/);
    expect(html).toContain('This page is a snapshot');

    // Unknown values are dashes or left out, never spelled out.
    expect(html).not.toMatch(/\b(null|undefined|NaN)\b/);
    expect(html).not.toContain('<dt>Secondary damage</dt>');
    expect(html).toContain('<span class="visually-hidden">Not reported</span>');
  });

  it('escapes lot data, links photos safely and serves no inline script or style', async () => {
    const html = (await t.app.inject({ url: await search() })).body;
    expect(html).not.toContain('<script>alert');
    expect(html).toContain('&lt;script&gt;alert(&quot;owned&quot;)&lt;/script&gt;');
    // Scripts only from our origin's files, no inline script, style attribute or handler.
    expect(html).not.toMatch(/<script(?![^>]*\ssrc="\/assets\/report\.js\?v=[0-9a-f]{10}")|\sstyle=|\son[a-z]+=/i);

    expect(html).toContain(
      '<a href="https://cs.copart.com/v1/41000001/2.jpg?w=1&amp;h=2" target="_blank" rel="noopener noreferrer"><img src="https://cs.copart.com/v1/41000001/2.jpg?w=1&amp;h=2" alt="Photo 2 of 2, Copart lot 41000001" loading="lazy"',
    );
    expect(html.match(/<img /g)).toHaveLength(2);
    expect(html).not.toContain('javascript:');
    // The IAAI lot has no images and the undated lot only an unusable one.
    expect(html.match(/No photos for this lot\./g)).toHaveLength(2);
  });

  it('keeps showing the snapshot after the lots change in the database', async () => {
    const path = await search();
    await t.repos.lots.upsertBatch([
      { ...newestLot, price: 99999, primary_damage: 'ROLLOVER' },
      makeLot({ vin, auction: 'copart', lot_id: 41000009, sale_date: '2025-02-01T00:00:00.000Z' }),
    ]);
    const html = (await t.app.inject({ url: path })).body;
    expect(html).toContain('$12,345');
    expect(html).toContain('Front end');
    expect(html).toContain('3 auction lots');
    expect(html).not.toContain('$99,999');
    expect(html).not.toContain('Rollover');
    expect(html).not.toContain('41000009');

    const fresh = (await t.app.inject({ url: await search() })).body;
    expect(fresh).toContain('$99,999');
    expect(fresh).toContain('Lot 41000009');
    expect(fresh).toContain('4 auction lots');
  });

  it('heads a report whose lots do not name the vehicle with its VIN', async () => {
    const bareVin = validVin('1FTFW1ET5DFC8888');
    await t.repos.lots.upsertBatch([makeLot({ vin: bareVin, auction: 'iaai', lot_id: 35000077 })]);
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/search', headers: { authorization: customer.token }, payload: { vin: bareVin } });
    const html = (await t.app.inject({ url: new URL(res.json().report_url as string).pathname })).body;
    expect(html).toContain(`<h1 id="report-title" class="vin-title">VIN <span class="vin__value">${bareVin}</span></h1>`);
    expect(html).toContain(`<title>VIN ${bareVin} · auction history · vinhistory</title>`);
    expect(html).not.toContain('<dl class="facts">');
    expect(html).toContain('1 auction lot');
    expect(html).toContain('No further details were reported for this lot.');
    expect(html).not.toMatch(/\b(null|undefined|NaN)\b/);
  });

  it.each([
    ['an unknown report id', `/report/${randomUUID()}`],
    ['a malformed report id', '/report/not-a-uuid'],
    ['an upper-case report id', `/report/${randomUUID().toUpperCase()}`],
    ['an unknown path', '/no/such/page?x=1'],
  ])('answers %s with the HTML 404 page', async (_name, url) => {
    const res = await t.app.inject({ url });
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers['x-robots-tag']).toMatch(/^noindex/);
    expect(res.body).toContain('<html lang="en">');
    expect(res.body).toContain('<meta name="robots" content="noindex, nofollow">');
    expect(res.body).toContain('<h1 id="not-found-title">We couldn\'t find that page</h1>');
    expect(res.body).toContain('<a class="button" href="/">Go to the home page</a>');
    expect(res.body).toMatch(/<link rel="stylesheet" href="\/assets\/app\.css\?v=[0-9a-f]{10}">/);
  });

  it('serves the stylesheet under /assets/', async () => {
    const page = (await t.app.inject({ url: '/report/not-a-uuid' })).body;
    const href = /<link rel="stylesheet" href="([^"]+)">/.exec(page)![1]!;
    for (const url of [href, '/assets/app.css']) {
      const res = await t.app.inject({ url });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/css/);
      expect(res.body).toContain('.lot {');
    }
    expect((await t.app.inject({ url: '/assets/missing.css' })).statusCode).toBe(404);
  });
});

describe('report formatting', () => {
  it('formats money as whole US dollars and odometers as miles', () => {
    expect(formatMoney(12345)).toBe('$12,345');
    expect(formatMoney(0)).toBe('$0');
    expect(formatMoney(1_250_000)).toBe('$1,250,000');
    expect(formatMoney(null)).toBeNull();
    expect(formatMiles(172691)).toBe('172,691 mi');
    expect(formatMiles(0)).toBe('0 mi');
    expect(formatMiles(null)).toBeNull();
  });

  it('formats dates in UTC whatever the local zone, and shows a value that is not a date as given', () => {
    expect(formatDate('2024-06-12T23:30:00.000Z')).toBe('Jun 12, 2024');
    expect(formatDate('2024-06-13T00:30:00.000Z')).toBe('Jun 13, 2024');
    expect(formatDate('sometime')).toBe('sometime');
    expect(formatDate(null)).toBeNull();
    expect(formatDateTime('2026-11-21T07:55:12.123Z')).toBe('Nov 21, 2026 at 07:55 UTC');
    expect(formatDateTime('2026-01-02T19:05:00.000Z')).toBe('Jan 2, 2026 at 19:05 UTC');
  });

  it('names auctions and tidies feed text', () => {
    expect(formatAuction('copart')).toBe('Copart');
    expect(formatAuction('iaai')).toBe('IAAI');
    expect(formatAuction('big-auto_sales')).toBe('Big Auto Sales');
    expect(cleanText('  4.6L  8 ')).toBe('4.6L 8');
    expect(cleanText('   ')).toBeNull();
    expect(cleanText(null)).toBeNull();
  });
});

describe('report view model', () => {
  const vin = validVin('4JGBF7BE5AA58553');
  const report = (lots: Lot[]) => ({ id: randomUUID(), accountId: 'acct_x', vin, createdAt: '2026-11-21T07:55:12.123Z', lots });

  it('names the vehicle from the newest lot that knows, and lists only known facts', () => {
    const view = presentReport(
      report([
        makeLot({ vin, name: null, year: 2010, brand: 'MERCEDES-BENZ', model: null, configuration: '  ' }),
        makeLot({ vin, name: null, year: 2009, brand: 'MERCEDES', model: 'GL CLASS', type: 'SUV' }),
      ]),
    );
    expect(view.vehicleName).toBe('2010 MERCEDES-BENZ GL CLASS');
    expect(view.vehicleFacts).toEqual([
      { label: 'Year', value: '2010' },
      { label: 'Make', value: 'MERCEDES-BENZ' },
      { label: 'Model', value: 'GL CLASS' },
      { label: 'Type', value: 'SUV' },
    ]);
    expect(view.madeAt).toEqual({ before: 'Report made at ', text: 'Nov 21, 2026, 07:55 UTC', after: '.', datetime: '2026-11-21T07:55:12.123Z' });
    expect(view.lotCount).toBe('2 auction lots');
    expect(reportTitle(view)).toBe(`2010 MERCEDES-BENZ GL CLASS · VIN ${vin} · auction history`);
  });

  it('does not repeat the year of a name that has it, and has no name when no lot gives one', () => {
    expect(presentReport(report([makeLot({ vin, name: '2010 MERCEDES-BENZ GL 450', year: 2010 })])).vehicleName).toBe('2010 MERCEDES-BENZ GL 450');
    const anonymous = presentReport(report([makeLot({ vin })]));
    expect(anonymous.vehicleName).toBeNull();
    expect(anonymous.vehicleFacts).toEqual([]);
    expect(anonymous.lotCount).toBe('1 auction lot');
    expect(reportTitle(anonymous)).toBe(`VIN ${vin} · auction history`);
  });

  it('always shows the four figures of a lot, and drops unknown rows and empty groups', () => {
    const [lot] = presentReport(
      report([makeLot({ vin, auction: 'iaai', lot_id: 35000002, price: 7300, odometer: 88123, odometer_type: 'ACTUAL', color: 'RED', sale_date: '2024-06-12T15:30:00.000Z' })]),
    ).lots;
    expect(lot!.anchor).toBe('lot-iaai-35000002');
    expect(lot!.auction).toBe('IAAI');
    expect(lot!.saleDate).toEqual({ before: 'Sold ', text: 'Jun 12, 2024', after: '', datetime: '2024-06-12T15:30:00.000Z' });
    expect(lot!.figures).toEqual([
      { label: 'Sale price', value: '$7,300' },
      { label: 'Odometer', value: '88,123 mi', note: '141,820 km · Actual' },
      { label: 'Retail value', value: null },
      { label: 'Repair cost', value: null },
    ]);
    expect(lot!.details).toEqual([{ title: 'Vehicle', fields: [{ label: 'Color', value: 'Red' }] }]);
    expect(lot!.photos).toEqual([]);
  });

  it('keeps an odometer type without a reading as a row, and a location without its zip', () => {
    const [lot] = presentReport(report([makeLot({ vin, odometer_type: 'EXEMPT', location: 'VALLEJO' })])).lots;
    expect(lot!.figures[1]).toEqual({ label: 'Odometer', value: null });
    expect(lot!.details).toEqual([
      { title: 'Condition and title', fields: [{ label: 'Odometer type', value: 'Exempt' }, { label: 'Location', value: 'Vallejo' }] },
    ]);
  });

  it('links only web images, with alt text naming the lot', () => {
    const [lot] = presentReport(
      report([makeLot({ vin, lot_id: 26519090, images: ['https://a.test/1.jpg', 'javascript:alert(1)', '/relative.jpg', 'http://b.test/2.jpg'] })]),
    ).lots;
    expect(lot!.photos).toEqual([
      { src: 'https://a.test/1.jpg', href: 'https://a.test/1.jpg', alt: 'Photo 1 of 2, Copart lot 26519090' },
      { src: 'http://b.test/2.jpg', href: 'http://b.test/2.jpg', alt: 'Photo 2 of 2, Copart lot 26519090' },
    ]);
  });

  it('names the vehicle on a lot only when it differs from the page heading', () => {
    const view = presentReport(
      report([
        makeLot({ vin, name: 'FORD F-150 XLT', year: 2013 }),
        makeLot({ vin, name: 'FORD F-150', year: 2013 }),
        makeLot({ vin }),
      ]),
    );
    expect(view.vehicleName).toBe('2013 FORD F-150 XLT');
    expect(view.lots.map((lot) => lot.name)).toEqual([null, '2013 FORD F-150', null]);
  });
});
