/// <reference lib="dom" />
// The functions passed to page.evaluate run in the browser; the DOM types check them.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, testConfig, type TestApp } from '../support/app.ts';
import { createCustomer } from '../support/fixtures.ts';
import { launchChromium, runnable } from './support.ts';
import { everyFlagLots, photoJpegs, startPhotoHost } from './report-samples.ts';

/**
 * The report in English, Ukrainian, Georgian and Arabic at phone and desktop width, and its PDF,
 * looked at: screenshots (docs/img with UPDATE_SCREENSHOTS=1, a temporary folder otherwise), axe's
 * accessibility rules on the English and Arabic pages, and each PDF turned into PNGs by pdftoppm.
 */
const IMAGES = process.env.UPDATE_SCREENSHOTS
  ? path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../docs/img')
  : mkdtempSync(path.join(os.tmpdir(), 'vinhistory-report-img-'));
const AXE = readFileSync(fileURLToPath(import.meta.resolve('axe-core/axe.min.js')), 'utf8');
const VIEWPORTS = { phone: { width: 390, height: 844 }, desktop: { width: 1366, height: 900 } } as const;

describe.skipIf(!runnable)('report in four languages, in a browser and as PDF', () => {
  let t: TestApp;
  let browser: Browser;
  let context: BrowserContext;
  let photos: Server;
  let origin: string;
  let reportPath: string;
  let dataDir: string;

  beforeAll(async () => {
    mkdirSync(IMAGES, { recursive: true });
    browser = await launchChromium();
    const jpegs = await photoJpegs(browser, 8);
    const photoHost = await startPhotoHost(jpegs);
    photos = photoHost.server;
    const photoBase = photoHost.base;

    dataDir = mkdtempSync(path.join(os.tmpdir(), 'vinhistory-report-img-data-'));
    t = await createTestApp('sqlite', { config: testConfig({ DATA_DIR: dataDir, OUTBOUND_ALLOW_PRIVATE: 'true' }) });
    const lots = everyFlagLots(photoBase, 6);
    await t.repos.lots.upsertBatch(lots);
    const customer = await createCustomer(t.repos);
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/search', headers: { authorization: customer.token }, payload: { vin: lots[0]!.vin } });
    expect(res.statusCode).toBe(200);
    reportPath = new URL(res.json().report_url as string).pathname;
    origin = await t.app.listen({ port: 0, host: '127.0.0.1' });
    // The photos come from a local stand-in on another port, which the page's CSP (https photos
    // only) would refuse; the CSP itself is checked by report-page.test.ts.
    context = await browser.newContext({ colorScheme: 'light', bypassCSP: true });
  });

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await new Promise((resolve) => photos?.close(resolve));
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function open(lang: string, viewport: { width: number; height: number }): Promise<Page> {
    const page = await context.newPage();
    await page.setViewportSize(viewport);
    const response = await page.goto(`${origin}${reportPath}?lang=${lang}`, { waitUntil: 'load' });
    expect(response?.status()).toBe(200);
    await page.evaluate(async () => {
      for (let y = 0; y < document.documentElement.scrollHeight; y += window.innerHeight / 2) {
        window.scrollTo(0, y);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      window.scrollTo(0, 0);
    });
    await page.waitForFunction(() => Array.from(document.images).every((image) => image.complete));
    await page.evaluate(() => document.fonts.ready);
    return page;
  }

  it.each(['en', 'uk', 'ka', 'ar'])('lays out the %s page on a phone and a desktop', async (lang) => {
    for (const [name, viewport] of Object.entries(VIEWPORTS)) {
      const page = await open(lang, viewport);
      expect(await page.locator('html').getAttribute('lang')).toBe(lang);
      expect(await page.locator('html').getAttribute('dir')).toBe(lang === 'ar' ? 'rtl' : 'ltr');
      const widths = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, inner: window.innerWidth }));
      expect(widths.scroll).toBeLessThanOrEqual(widths.inner);
      // The warning signs come before the lots, and the script of the language has its own font.
      const order = await page.evaluate(() => [document.querySelector('.flags')!, document.querySelector('.lots')!].map((e) => e.getBoundingClientRect().top));
      expect(order[0]).toBeLessThan(order[1]!);
      if (lang === 'ka' || lang === 'ar') {
        const family = lang === 'ka' ? 'Noto Sans Georgian' : 'Noto Sans Arabic';
        expect(await page.evaluate((f) => document.fonts.check(`16px "${f}"`), family)).toBe(true);
      }
      // The gone photo is a placeholder.
      expect(await page.locator('.photo-placeholder').count()).toBeGreaterThan(0);
      await page.screenshot({ path: path.join(IMAGES, `report-${lang}-${name}.png`), fullPage: name === 'phone' ? false : true });
      await page.close();
    }
  });

  it.each(['en', 'ar'])('has no serious or critical axe violation in %s', async (lang) => {
    const page = await open(lang, VIEWPORTS.desktop);
    await page.evaluate(AXE);
    const violations = await page.evaluate(async () => {
      const axe = (window as unknown as { axe: { run: (context: Document, options: object) => Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }> } }).axe;
      const result = await axe.run(document, { resultTypes: ['violations'] });
      return result.violations.map((v) => ({ id: v.id, impact: v.impact, targets: v.nodes.slice(0, 3).map((n) => n.target.join(' ')) }));
    });
    expect(violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')).toEqual([]);
    await page.close();
  });

  it.each([
    ['en', 'letter'],
    ['uk', 'a4'],
    ['ka', 'a4'],
    ['ar', 'a4'],
  ])('prints the %s PDF on %s, pages turned into PNGs', async (lang, paper) => {
    // Four new prints from one address in a row: past the per-reader limit (pdfPrints, 2 a second)
    // a reader is told when to come back, and does, as a browser user would.
    let res = await fetch(`${origin}${reportPath}.pdf?lang=${lang}&paper=${paper}`);
    if (res.status === 429) {
      await new Promise((resolve) => setTimeout(resolve, Number(res.headers.get('retry-after')) * 1000));
      res = await fetch(`${origin}${reportPath}.pdf?lang=${lang}&paper=${paper}`);
    }
    expect(res.status).toBe(200);
    const pdf = Buffer.from(await res.arrayBuffer());
    expect(pdf.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    const file = path.join(dataDir, `report-${lang}.pdf`);
    writeFileSync(file, pdf);
    const info = execFileSync('pdfinfo', [file], { encoding: 'utf8' });
    const pages = Number(/^Pages:\s+(\d+)/m.exec(info)?.[1]);
    expect(pages).toBeGreaterThanOrEqual(2);
    // A4 is 595 x 842 points, Letter 612 x 792.
    expect(info).toMatch(paper === 'letter' ? /Page size:\s+612 x 792/ : /Page size:\s+59[56](\.\d+)? x 84[12](\.\d+)?/);
    execFileSync('pdftoppm', ['-png', '-r', '60', '-f', '1', '-l', '2', file, path.join(IMAGES, `report-pdf-${lang}`)]);
  });
});
