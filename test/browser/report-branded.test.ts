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
import { buildAppOn, testConfig } from '../support/app.ts';
import { createTestDatabase, type TestDatabase } from '../support/databases.ts';
import { TEST_SCRYPT, WebClient, randomEmail } from '../support/customer-app.ts';
import type { App } from '../../src/app.ts';
import { launchChromium, lowContrastTexts, runnable } from './support.ts';
import { everyFlagLots, photoJpegs, startPhotoHost } from './report-samples.ts';

/**
 * A white-label report looked at: the branded page at phone and desktop width (docs/img with
 * UPDATE_SCREENSHOTS=1, a temporary folder otherwise), nothing of ours in what a reader sees,
 * axe on it and on the account's brand page (with its preview), and its PDF as text and as a PNG.
 */
const IMAGES = process.env.UPDATE_SCREENSHOTS
  ? path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../docs/img')
  : mkdtempSync(path.join(os.tmpdir(), 'vinhistory-branded-img-'));
const AXE = readFileSync(fileURLToPath(import.meta.resolve('axe-core/axe.min.js')), 'utf8');
const VIEWPORTS = { phone: { width: 390, height: 844 }, desktop: { width: 1366, height: 900 } } as const;

const LOGO = `<svg xmlns="http://www.w3.org/2000/svg" width="220" height="48" viewBox="0 0 220 48">
  <rect x="0" y="4" width="40" height="40" rx="8" fill="#7a1f5c"/>
  <path d="M10 24 l8 8 l14 -16" stroke="#fff" stroke-width="5" fill="none" stroke-linecap="round" stroke-linejoin="round"/>
  <text x="50" y="33" font-family="DejaVu Sans, sans-serif" font-size="22" font-weight="bold" fill="#3a0f2c">AutoCheck PL</text>
  <script>alert('no')</script>
</svg>`;

async function axeViolations(page: Page) {
  await page.evaluate(AXE);
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (context: Document, options: object) => Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }> } }).axe;
    const result = await axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, targets: v.nodes.slice(0, 3).map((n) => n.target.join(' ')) }));
  });
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

describe.skipIf(!runnable)('a white-label report in a browser and as PDF', () => {
  let database: TestDatabase;
  let app: App;
  let browser: Browser;
  let context: BrowserContext;
  let photos: Server;
  let origin: string;
  let reportPath: string;
  let dataDir: string;
  let customer: WebClient;
  let brandId: string;

  beforeAll(async () => {
    mkdirSync(IMAGES, { recursive: true });
    browser = await launchChromium();
    const jpegs = await photoJpegs(browser, 8);
    const photoHost = await startPhotoHost(jpegs);
    photos = photoHost.server;
    const photoBase = photoHost.base;

    dataDir = mkdtempSync(path.join(os.tmpdir(), 'vinhistory-branded-data-'));
    database = await createTestDatabase('sqlite');
    app = await buildAppOn({ config: testConfig({ DATA_DIR: dataDir, OUTBOUND_ALLOW_PRIVATE: 'true' }), db: database.db, overrides: { passwordCost: TEST_SCRYPT } });
    await app.ready();
    const lots = everyFlagLots(photoBase, 4);
    await database.repos.lots.upsertBatch(lots);

    const email = randomEmail();
    customer = new WebClient(app);
    await customer.signUp(email);
    const account = (await database.repos.accounts.findByEmail(email))!;
    await database.repos.subscriptions.create({ accountId: account.id, planCode: 'standard', billing: 'monthly', startedAt: new Date(Date.now() - 1000) });
    const saved = await app.services.brands.save(account.id, null, {
      name: 'AutoCheck PL',
      accent: '#7a1f5c',
      contact: 'Pytania? kontakt@autocheck.example · +48 22 000 00 00',
      reportBaseUrl: 'https://raporty.autocheck.example',
      logo: Buffer.from(LOGO),
    });
    if (saved.kind !== 'saved') throw new Error(`brand not saved: ${JSON.stringify(saved)}`);
    brandId = saved.brand.id;
    const { token } = await database.repos.tokens.create(account.id, 'site');
    const res = await app.inject({ method: 'POST', url: '/api/v1/search', headers: { authorization: token }, payload: { vin: lots[0]!.vin } });
    expect(res.statusCode).toBe(200);
    expect(res.json().report_url).toMatch(/^https:\/\/raporty\.autocheck\.example\/report\//);
    reportPath = new URL(res.json().report_url as string).pathname;
    origin = await app.listen({ port: 0, host: '127.0.0.1' });
    // Photos come from a local stand-in on another port, which the page's CSP (https only) would refuse.
    context = await browser.newContext({ colorScheme: 'light', bypassCSP: true });
    const host = new URL(origin).hostname;
    await context.addCookies([...customer.cookies].map(([name, value]) => ({ name, value, domain: host, path: '/' })));
  });

  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await database?.destroy();
    await new Promise((resolve) => photos?.close(resolve));
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function open(url: string, viewport: { width: number; height: number }, reader: BrowserContext = context): Promise<Page> {
    const page = await reader.newPage();
    await page.setViewportSize(viewport);
    const response = await page.goto(url, { waitUntil: 'load' });
    expect(response?.status()).toBe(200);
    // Photos load lazily: scroll through once so that every image is asked for.
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

  it('shows their brand and nothing of ours, on a phone and a desktop, to an anonymous reader', async () => {
    const anonymous = await browser.newContext({ colorScheme: 'light', bypassCSP: true });
    for (const [name, viewport] of Object.entries(VIEWPORTS)) {
      const page = await open(`${origin}${reportPath}?lang=pl`, viewport, anonymous);
      const seen = await page.evaluate(() => ({ title: document.title, text: document.body.innerText, html: document.documentElement.outerHTML }));
      expect(seen.title).toMatch(/ · AutoCheck PL$/);
      expect(seen.text).toContain('kontakt@autocheck.example');
      expect(seen.html).not.toMatch(/vinhistory/i);
      // Everything the page loads or links from our address is under /report/, which their proxy forwards.
      const ours = await page.evaluate((at) => {
        const urls = Array.from(document.querySelectorAll('[href],[src]')).map((e) => (e as HTMLAnchorElement).href || (e as HTMLImageElement).src);
        const loaded = performance.getEntriesByType('resource').map((entry) => entry.name);
        // The browser's own /favicon.ico request goes to whichever site the reader is on (theirs).
        return [...urls, ...loaded].filter((url) => url.startsWith(at) && !new URL(url).pathname.startsWith('/report/') && new URL(url).pathname !== '/favicon.ico');
      }, origin);
      expect(ours).toEqual([]);
      // The logo is the PNG drawn from the SVG, loaded, and the accent is theirs.
      const logo = await page.locator('.report-brand__logo').evaluate((image: HTMLImageElement) => ({ width: image.naturalWidth, src: image.currentSrc }));
      expect(logo.width).toBeGreaterThan(0);
      expect(new URL(logo.src).pathname).toMatch(/^\/report\/brand\/[0-9a-f]{64}\.png$/);
      expect(await page.evaluate(() => getComputedStyle(document.documentElement).getPropertyValue('--accent').trim())).toBe('#7a1f5c');
      const widths = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, inner: window.innerWidth }));
      expect(widths.scroll).toBeLessThanOrEqual(widths.inner);
      await page.screenshot({ path: path.join(IMAGES, `report-branded-${name}.png`), fullPage: name === 'desktop' });
      await page.close();
    }
    await anonymous.close();
  });

  it('keeps every text readable in their accent, in the light and the dark scheme', async () => {
    for (const colorScheme of ['light', 'dark'] as const) {
      const reader = await browser.newContext({ colorScheme, bypassCSP: true });
      const page = await open(`${origin}${reportPath}?lang=en`, VIEWPORTS.phone, reader);
      expect(await lowContrastTexts(page, { skip: '.visually-hidden, .skip-link' }), colorScheme).toEqual([]);
      if (colorScheme === 'dark') await page.screenshot({ path: path.join(IMAGES, 'report-branded-dark-phone.png') });
      await reader.close();
    }
  });

  it('has no serious or critical axe violation on the branded report', async () => {
    const page = await open(`${origin}${reportPath}?lang=en`, VIEWPORTS.desktop);
    expect(await axeViolations(page)).toEqual([]);
    await page.close();
  });

  it('the brand page, with its preview, passes axe; screenshots of it', async () => {
    for (const [name, viewport] of Object.entries(VIEWPORTS)) {
      const page = await open(`${origin}/account/brand?brand=${brandId}`, viewport);
      const frame = page.frameLocator('iframe.brand-preview');
      await frame.locator('.report-bar').waitFor();
      expect(await frame.locator('.report-footer').innerText()).toContain('AutoCheck PL');
      if (name === 'desktop') expect(await axeViolations(page)).toEqual([]);
      const widths = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, inner: window.innerWidth }));
      expect(widths.scroll).toBeLessThanOrEqual(widths.inner);
      await page.screenshot({ path: path.join(IMAGES, `account-brand-${name}.png`), fullPage: true });
      await page.close();
    }
  });

  it('prints a PDF with their name in it and none of ours, page 1 turned into a PNG', async () => {
    const res = await fetch(`${origin}${reportPath}.pdf?lang=pl&paper=a4`);
    expect(res.status).toBe(200);
    const pdf = Buffer.from(await res.arrayBuffer());
    const file = path.join(dataDir, 'branded.pdf');
    writeFileSync(file, pdf);
    const text = execFileSync('pdftotext', [file, '-'], { encoding: 'utf8' });
    expect(text).toContain('AutoCheck PL');
    expect(text).toContain('kontakt@autocheck.example');
    expect(text).not.toMatch(/vinhistory/i);
    const info = execFileSync('pdfinfo', [file], { encoding: 'utf8' });
    expect(info).not.toMatch(/vinhistory/i);
    execFileSync('pdftoppm', ['-png', '-r', '60', '-f', '1', '-l', '1', file, path.join(IMAGES, 'report-pdf-branded')]);
  });
});
