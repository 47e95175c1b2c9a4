/// <reference lib="dom" />
// The functions passed to page.evaluate run in the browser; the DOM types check them.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, testConfig, type TestApp } from '../support/app.ts';
import { createCustomer } from '../support/fixtures.ts';
import { f150Market } from '../support/market-samples.ts';
import { axeViolations, launchChromium, runnable, SCREENSHOTS } from './support.ts';

const VIEWPORTS = { phone: { width: 390, height: 844 }, desktop: { width: 1366, height: 900 } } as const;

/**
 * "What similar cars sold for" as readers see it: the report's section in English and Arabic, light
 * and dark, phone and desktop, its PDF page, and the website's Market page; screenshots into
 * docs/screenshots (UPDATE_SCREENSHOTS=1), axe's serious and critical rules. One browser, one app.
 */
describe.skipIf(!runnable)('the market in a browser', () => {
  let t: TestApp;
  let browser: Browser;
  let origin: string;
  let reportPath: string;
  let dataDir: string;

  beforeAll(async () => {
    browser = await launchChromium();
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'vinhistory-market-pages-'));
    t = await createTestApp('sqlite', { config: testConfig({ DATA_DIR: dataDir }) });
    const sample = f150Market(new Date(), 60);
    await t.repos.lots.upsertBatch([...sample.comparables, ...sample.vehicle]);
    const customer = await createCustomer(t.repos);
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/search', headers: { authorization: customer.token }, payload: { vin: sample.vehicle[0]!.vin } });
    expect(res.statusCode).toBe(200);
    reportPath = new URL(res.json().report_url as string).pathname;
    origin = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function open(url: string, viewport: { width: number; height: number }, colorScheme: 'light' | 'dark'): Promise<Page> {
    const context = await browser.newContext({ colorScheme, viewport });
    const page = await context.newPage();
    const response = await page.goto(`${origin}${url}`, { waitUntil: 'load' });
    expect(response?.status()).toBe(200);
    await page.evaluate(() => document.fonts.ready);
    // Nothing of the page is wider than the screen.
    const widths = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, inner: window.innerWidth }));
    expect(widths.scroll).toBeLessThanOrEqual(widths.inner);
    return page;
  }

  it.each([
    ['en', 'desktop', 'light', 'report-market-en-desktop.png'],
    ['en', 'phone', 'dark', 'report-market-en-phone-dark.png'],
    ['ar', 'desktop', 'dark', 'report-market-ar-desktop-dark.png'],
    ['ar', 'phone', 'light', 'report-market-ar-phone.png'],
  ] as const)('lays out the report section in %s on a %s, %s', async (lang, size, scheme, file) => {
    const page = await open(`${reportPath}?lang=${lang}`, VIEWPORTS[size], scheme);
    const section = page.locator('section.market');
    await section.scrollIntoViewIfNeeded();
    expect(await section.locator('.market-chart__bar').count()).toBeGreaterThan(3);
    // The bars' colour is the palette's, so it changes with the scheme; the chart reads the page's way.
    const chart = await page.evaluate(() => {
      const bars = Array.from(document.querySelectorAll('.market-chart__bar')).map((bar) => bar.getBoundingClientRect().left);
      return { fill: getComputedStyle(document.querySelector('.market-chart__bar')!).fill, firstLeft: bars[0]!, lastLeft: bars.at(-1)! };
    });
    expect(chart.fill).toBe(scheme === 'dark' ? 'rgb(143, 176, 255)' : 'rgb(29, 78, 216)');
    if (lang === 'ar') expect(chart.firstLeft).toBeGreaterThan(chart.lastLeft);
    else expect(chart.firstLeft).toBeLessThan(chart.lastLeft);
    expect(await page.locator('.lot__market').count()).toBe(2);
    await section.screenshot({ path: path.join(SCREENSHOTS, file) });
    if (size === 'desktop') expect(await axeViolations(page)).toEqual([]);
    await page.context().close();
  });

  it('prints the section in the PDF', async () => {
    const res = await fetch(`${origin}${reportPath}.pdf?lang=en&paper=a4`);
    expect(res.status).toBe(200);
    const file = path.join(dataDir, 'report.pdf');
    writeFileSync(file, Buffer.from(await res.arrayBuffer()));
    const pages = Number(/^Pages:\s+(\d+)/m.exec(execFileSync('pdfinfo', [file], { encoding: 'utf8' }))![1]);
    const pageText = (n: number) => execFileSync('pdftotext', ['-f', String(n), '-l', String(n), '-layout', file, '-'], { encoding: 'utf8' });
    let found = 0;
    for (let n = 1; n <= pages && found === 0; n++) if (pageText(n).includes('What similar cars sold for')) found = n;
    expect(found).toBeGreaterThan(0);
    // The heading keeps its figures on its page; the chart's table is open on paper.
    const text = pageText(found);
    expect(text).toMatch(/\d+ similar sales/);
    expect(text).toContain('Median price');
    expect(`${text}${found < pages ? pageText(found + 1) : ''}`).toContain('Median price by month');
    execFileSync('pdftoppm', ['-png', '-r', '70', '-f', String(found), '-l', String(found), '-singlefile', file, path.join(SCREENSHOTS, 'report-market-pdf')]);
  });

  it.each([
    ['desktop', 'light', 'market-page-desktop.png'],
    ['phone', 'dark', 'market-page-phone-dark.png'],
  ] as const)('lays out the Market page on a %s, %s', async (size, scheme, file) => {
    const page = await open('/market?make=Ford&model=F-150&year=2019', VIEWPORTS[size], scheme);
    expect(await page.locator('section.market .market__value').first().textContent()).toMatch(/^\$[\d,]+$/);
    expect(await page.locator('.market-api pre code').textContent()).toContain('/api/v1/market?make=Ford&model=F-150&year=2019');
    await page.screenshot({ path: path.join(SCREENSHOTS, file), fullPage: true });
    expect(await axeViolations(page)).toEqual([]);
    await page.context().close();
  });
});
