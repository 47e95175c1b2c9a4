import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.ts';
import { createCustomer, makeLot } from '../support/fixtures.ts';
import { axeViolations, launchChromium, lowContrastTexts, runnable, SCREENSHOTS } from './support.ts';

/** The real Copart VIN of the Copart sample in test/fixtures/copart/, with a lot's history made up around it. */
const VIN = '4JGBF7BE5AA585531';

describe.skipIf(!runnable)("a lot's history on the report page, in a browser", () => {
  let t: TestApp;
  let browser: Browser;
  let origin: string;
  let reportPath: string;

  beforeAll(async () => {
    t = await createTestApp('sqlite');
    const lot = makeLot({
      vin: VIN, auction: 'copart', lot_id: 26519090, name: '2010 MERCEDES-BENZ GL 450 4MATIC', year: 2010, brand: 'MERCEDES-BENZ',
      sale_date: '2026-11-05T18:00:00.000Z', price: null, odometer: 172691, odometer_type: 'Actual', primary_damage: 'SIDE', document: 'SALVAGE CERTIFICATE (CA)',
    });
    await t.repos.lots.upsertBatch([lot], { now: new Date('2026-11-03T09:00:00.000Z'), source: 'copart-2026-11-03.csv' });
    await t.repos.lots.upsertBatch([{ ...lot, price: 4000 }], { now: new Date('2026-11-06T09:00:00.000Z'), source: 'copart-feed' });
    await t.repos.lotHistory.recordListing([{ auction: 'copart', lotId: 26519090 }], 'left', { now: new Date('2026-11-10T09:00:00.000Z'), source: 'copart-feed' });
    await t.repos.lots.upsertBatch(
      [{ ...lot, price: 3500, sale_date: '2026-11-26T18:00:00.000Z', odometer: 152691, document: 'CLEAN TITLE', primary_damage: 'FRONT END' }],
      { now: new Date('2026-11-24T09:00:00.000Z'), source: 'copart-feed' },
    );
    const customer = await createCustomer(t.repos);
    const res = await t.app.inject({ url: `/api/v1/search?vin=${VIN}`, headers: { authorization: customer.token } });
    expect(res.statusCode).toBe(200);
    reportPath = new URL(res.json().report_url as string).pathname;
    origin = await t.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('lists what changed and when, readable and accessible (docs/screenshots/report-history.png)', async () => {
    const context = await browser.newContext({ colorScheme: 'light', locale: 'en-US' });
    await context.route((url) => url.origin !== origin, (route) => route.abort());
    const page = await context.newPage();
    await page.setViewportSize({ width: 900, height: 900 });
    expect((await page.goto(`${origin}${reportPath}`, { waitUntil: 'load' }))?.status()).toBe(200);
    const history = page.locator('.lot-history');
    await expect(history.locator('h4').textContent()).resolves.toBe('History of this lot');
    expect(await history.locator('.lot-history__entries > li').count()).toBe(4);
    expect(await history.locator('.lot-history__changes li').allTextContents()).toEqual([
      'Sale price: $4,000',
      "Left the auction's listing",
      'Sale price: $4,000 → $3,500',
      'Sale date: Nov 5, 2026 → Nov 26, 2026',
      'Odometer: 172,691 mi → 152,691 mi',
      'Primary damage: Side → Front end',
      'Title document: Salvage certificate (CA) → Clean title',
      "Back in the auction's listing",
    ]);
    expect(await page.locator('.flags').textContent()).toContain('Title washed');
    expect(await axeViolations(page)).toEqual([]);
    expect(await lowContrastTexts(page, { skip: '.visually-hidden, .skip-link' })).toEqual([]);
    await page.locator('.lot').first().screenshot({ path: path.join(SCREENSHOTS, 'report-history.png') });
    await context.close();
  });

  it('prints the same history in the PDF', async () => {
    const res = await t.app.inject({ url: `${reportPath}.pdf?lang=en&paper=a4` });
    expect(res.statusCode).toBe(200);
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'vinhistory-history-pdf-')), 'report.pdf');
    writeFileSync(file, res.rawPayload);
    const text = execFileSync('pdftotext', [file, '-'], { encoding: 'utf8' }).replace(/\s+/g, ' ');
    expect(text.toLowerCase()).toContain('history of this lot');
    expect(text).toContain('Sale price: $4,000 → $3,500');
    expect(text).toContain("Left the auction's listing");
    expect(text).toContain('Title washed');
  });
});
