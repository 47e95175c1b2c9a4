/// <reference lib="dom" />
// The functions passed to page.evaluate run in the browser; the DOM types check them.
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.ts';
import { createCustomer, makeLot } from '../support/fixtures.ts';
import { launchChromium, lowContrastTexts, runnable, SCREENSHOTS } from './support.ts';

/** The contrast check passes over screen-reader-only text and the skip link. */
const CONTRAST = { skip: '.visually-hidden, .skip-link' };

/** The real Copart VIN of the Copart sample in test/fixtures/copart/, with lots made up around it. */
const VIN = '4JGBF7BE5AA585531';
const PHOTO_HOST = 'https://photos.auction.test';
const DEAD_HOST = 'https://cdn.unreachable.test';

/** Stand-in lot photos (there is no network): a car outline on a coloured backdrop. */
function fakePhoto(seed: number): string {
  const hue = (seed * 47) % 360;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="640" height="480" viewBox="0 0 640 480">
<defs><linearGradient id="g" x1="0" y1="0" x2="0" y2="1"><stop offset="0" stop-color="hsl(${hue} 30% 78%)"/><stop offset="1" stop-color="hsl(${hue} 25% 52%)"/></linearGradient></defs>
<rect width="640" height="480" fill="url(#g)"/><rect y="330" width="640" height="150" fill="hsl(${hue} 10% 35%)"/>
<path d="M110 320 L150 250 Q170 215 215 210 L400 205 Q450 205 480 245 L520 262 Q545 270 545 300 L545 320 Z" fill="hsl(${(hue + 180) % 360} 20% 22%)"/>
<path d="M185 250 L215 222 L300 220 L300 252 Z M318 220 L395 218 Q430 220 452 252 L318 252 Z" fill="hsl(${hue} 40% 88%)"/>
<circle cx="205" cy="322" r="36" fill="#1b1d21"/><circle cx="205" cy="322" r="15" fill="#9aa0a8"/>
<circle cx="455" cy="322" r="36" fill="#1b1d21"/><circle cx="455" cy="322" r="15" fill="#9aa0a8"/></svg>`;
}

const LOTS = [
  makeLot({
    vin: VIN,
    auction: 'copart',
    lot_id: 26519090,
    sale_date: '2024-03-14T18:00:00.000Z',
    name: '2010 MERCEDES-BENZ GL 450 4MATIC',
    year: 2010,
    brand: 'MERCEDES-BENZ',
    model: 'GL-CLASS',
    configuration: '450 4MATIC',
    type: 'SUV',
    price: 9850,
    odometer: 172691,
    odometer_type: 'Actual',
    retail_value: 12563,
    repair_cost: 4210,
    primary_damage: 'SIDE',
    secondary_damage: 'REAR END',
    highlight: 'Run & Drive Verified',
    keys: 'YES',
    document: 'SALVAGE CERTIFICATE (CA)',
    location: 'VALLEJO',
    location_zip: '94590',
    engine: '4.6L  8',
    cylinders: 8,
    transmission: 'AUTOMATIC',
    drive: 'All wheel drive',
    fuel: 'GAS',
    body: '4DR SPOR',
    color: 'BLACK',
    images: Array.from({ length: 8 }, (_, i) => `${PHOTO_HOST}/26519090/${i + 1}.jpg`),
  }),
  makeLot({
    vin: VIN,
    auction: 'iaai',
    lot_id: 45289258,
    sale_date: '2022-08-02T15:30:00.000Z',
    price: 14500,
    odometer: 151020,
    odometer_type: 'Actual',
    retail_value: 18900,
    repair_cost: 6120,
    primary_damage: 'REAR',
    secondary_damage: 'LEFT SIDE',
    highlight: 'Starts',
    keys: 'YES',
    document: 'CLEAR (CA)',
    location: 'SACRAMENTO',
    location_zip: '95828',
    color: 'BLACK',
    images: Array.from({ length: 3 }, (_, i) => `${DEAD_HOST}/45289258/${i + 1}.webp`),
  }),
  makeLot({
    vin: VIN,
    auction: 'copart',
    lot_id: 30111222,
    sale_date: '2019-11-20T17:00:00.000Z',
    price: 21000,
    odometer: 98400,
    primary_damage: 'HAIL',
    location: 'FRESNO',
  }),
  makeLot({ vin: VIN, auction: 'manheim', lot_id: 7001234 }),
];

/** Lazy photos load as they near the viewport; scroll through so that the screenshot has them. */
async function loadAllPhotos(page: Page): Promise<void> {
  await page.evaluate(async () => {
    for (let y = 0; y < document.documentElement.scrollHeight; y += window.innerHeight / 2) {
      window.scrollTo(0, y);
      await new Promise((resolve) => setTimeout(resolve, 30));
    }
  });
  await page.waitForFunction(() => Array.from(document.images).every((image) => image.complete));
  await page.evaluate(() => window.scrollTo(0, 0));
}

describe.skipIf(!runnable)('report page in a browser', () => {
  let t: TestApp;
  let browser: Browser;
  let context: BrowserContext;
  let origin: string;
  let reportPath: string;
  const cspViolations: string[] = [];
  const pageErrors: string[] = [];

  beforeAll(async () => {
    t = await createTestApp('sqlite');
    await t.repos.lots.upsertBatch(LOTS);
    const customer = await createCustomer(t.repos);
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/search', headers: { authorization: customer.token }, payload: { vin: VIN } });
    expect(res.statusCode).toBe(200);
    reportPath = new URL(res.json().report_url as string).pathname;
    origin = await t.app.listen({ port: 0, host: '127.0.0.1' });

    browser = await launchChromium();
    context = await browser.newContext({ colorScheme: 'light', locale: 'en-US' });
    // Everything off this machine fails at once, as it would without a network, except the stand-in
    // photo host (routes registered later are tried first).
    await context.route((url) => url.origin !== origin && url.protocol !== 'data:', (route) => route.abort());
    await context.route(`${PHOTO_HOST}/**`, (route) => {
      const seed = Number(/\/(\d+)\.jpg$/.exec(route.request().url())?.[1] ?? 0);
      return route.fulfill({ status: 200, contentType: 'image/svg+xml', body: fakePhoto(seed) });
    });
  });

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  async function open(url: string, viewport: { width: number; height: number }) {
    const page = await context.newPage();
    await page.setViewportSize(viewport);
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) cspViolations.push(message.text());
    });
    page.on('pageerror', (error) => pageErrors.push(error.message));
    const response = await page.goto(`${origin}${url}`, { waitUntil: 'load' });
    return { page, status: response?.status() };
  }

  it('fits a phone screen, with the stylesheet applied and a clear outline', async () => {
    for (const viewport of [{ width: 360, height: 740 }, { width: 390, height: 844 }]) {
      const { page, status } = await open(reportPath, viewport);
      expect(status).toBe(200);
      const widths = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, inner: window.innerWidth }));
      expect(widths.scroll).toBeLessThanOrEqual(widths.inner);

      if (viewport.width === 390) {
        expect(await page.locator('.lot').first().evaluate((element) => getComputedStyle(element).borderTopLeftRadius)).toBe('12px');
        expect(await page.evaluate(() => getComputedStyle(document.body).backgroundColor)).toBe('rgb(243, 244, 247)');
        // Two figures a row on a phone.
        const tops = await page.locator('.lot').first().locator('.figure').evaluateAll((figures) => figures.map((f) => f.getBoundingClientRect().top));
        expect(new Set(tops).size).toBe(2);

        await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('2010 MERCEDES-BENZ GL 450 4MATIC');
        expect(await page.locator('#lots-title').textContent()).toMatch(/^4 auction lots/);
        // The upcoming lot (no sale date) first, labelled.
        expect(await page.getByRole('heading', { level: 3 }).allTextContents()).toEqual([
          'Manheim Lot 7001234 Upcoming',
          'Copart Lot 26519090',
          'IAAI Lot 45289258',
          'Copart Lot 30111222',
        ]);
        expect(await page.getByRole('banner').count()).toBe(1);
        expect(await page.getByRole('main').count()).toBe(1);
        expect(await page.getByRole('contentinfo').count()).toBe(1);
        expect(await page.locator('html').getAttribute('lang')).toBe('en');
        expect(await page.getByText(VIN, { exact: true }).count()).toBe(1);

        expect(await page.locator('.photo-grid li').count()).toBe(11);
        const images = page.locator('.photo-grid img');
        for (const image of await images.all()) {
          expect(await image.getAttribute('loading')).toBe('lazy');
          expect(await image.getAttribute('alt')).toMatch(/^Photo \d+ of \d+, (Copart|IAAI) lot \d+$/);
        }
        expect(await page.getByRole('link', { name: 'Photo 1 of 8, Copart lot 26519090 (full size, opens in a new tab)' }).getAttribute('href')).toBe(
          `${PHOTO_HOST}/26519090/1.jpg`,
        );
        expect(await page.getByText('No photos for this lot.').count()).toBe(2);

        await loadAllPhotos(page);
        const loaded = await page.evaluate(() => Array.from(document.images).filter((image) => image.naturalWidth > 0).length);
        expect(loaded).toBe(8);
        // The photos of the dead host became placeholders.
        await page.waitForFunction(() => document.querySelectorAll('.photo-placeholder').length === 3);
        expect(await page.locator('.photo-grid img').count()).toBe(8);
        expect(await lowContrastTexts(page, CONTRAST)).toEqual([]);
        await page.screenshot({ path: path.join(SCREENSHOTS, 'report-phone.png'), fullPage: true });
      }
      await page.close();
    }
  });

  it('lays the lots out as cards on a desktop', async () => {
    const { page, status } = await open(reportPath, { width: 1280, height: 900 });
    expect(status).toBe(200);
    const widths = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, inner: window.innerWidth }));
    expect(widths.scroll).toBeLessThanOrEqual(widths.inner);
    // The four figures of a lot in one row, and the two detail groups side by side.
    const tops = await page.locator('.lot').nth(1).locator('.figure').evaluateAll((figures) => figures.map((f) => f.getBoundingClientRect().top));
    expect(new Set(tops).size).toBe(1);
    const groups = await page.locator('.lot').nth(1).locator('.details__group').evaluateAll((list) => list.map((g) => g.getBoundingClientRect().top));
    expect(groups).toHaveLength(2);
    expect(groups[0]).toBe(groups[1]);
    expect(await page.locator('main').evaluate((main) => main.getBoundingClientRect().width)).toBeLessThanOrEqual(68 * 16);

    await loadAllPhotos(page);
    expect(await lowContrastTexts(page, CONTRAST)).toEqual([]);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'report-desktop.png'), fullPage: true });

    // Readers with a dark system theme get the dark palette, which must stay as legible.
    await page.emulateMedia({ colorScheme: 'dark' });
    expect(await page.evaluate(() => getComputedStyle(document.body).backgroundColor)).toBe('rgb(15, 18, 23)');
    expect(await lowContrastTexts(page, CONTRAST)).toEqual([]);
    await page.close();
  });

  it('shows a friendly 404 page for an unknown report', async () => {
    const { page, status } = await open(`/report/${randomUUID()}`, { width: 1280, height: 720 });
    expect(status).toBe(404);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe("We couldn't find that page");
    const home = page.getByRole('link', { name: 'Go to the home page' });
    expect(await home.getAttribute('href')).toBe('/');
    expect(await page.locator('.not-found').evaluate((element) => getComputedStyle(element).textAlign)).toBe('center');
    expect(await lowContrastTexts(page, CONTRAST)).toEqual([]);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'not-found.png') });
    await page.close();
  });

  it('loads under the content security policy without a violation or script error', () => {
    expect(cspViolations).toEqual([]);
    expect(pageErrors).toEqual([]);
  });
});
