/// <reference lib="dom" />
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BRAND_LIMITS } from '../../src/domain/brand.ts';
import { readPdfStamp } from '../../src/verification/pdf-stamp.ts';
import { createTestApp, testConfig, type TestApp } from '../support/app.ts';
import { createCustomer } from '../support/fixtures.ts';
import { axeViolations, launchChromium, runnable, SCREENSHOTS } from './support.ts';
import { everyFlagLots, SAMPLE_VIN } from './report-samples.ts';

/** The QR codes zbarimg finds in a PNG, as their texts. */
function qrCodes(png: string): string[] {
  try {
    return execFileSync('zbarimg', ['--quiet', '--raw', png], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).split('\n').filter((line) => line !== '');
  } catch {
    // zbarimg exits 4 when it finds no code.
    return [];
  }
}

/**
 * Verifiable reports looked at (issue 29): the report page's section with the QR code of its own
 * address and the digest of its signed payload, and every page of its PDF with both in the footer,
 * each QR code read back by zbarimg (Debian's zbar-tools) from the rendered pixels.
 */
describe.skipIf(!runnable)('the QR code and digest of a report, on its page and on every page of its PDF', () => {
  let t: TestApp;
  let browser: Browser;
  let origin: string;
  let dir: string;
  let reportPath: string;
  let digest: string;
  let readers = 0;
  const reader = () => `198.18.7.${++readers}`;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'vinhistory-verify-'));
    t = await createTestApp('sqlite', { config: testConfig({ DATA_DIR: dir }) });
    await t.repos.lots.upsertBatch(everyFlagLots('https://photos.invalid', 0));
    const customer = await createCustomer(t.repos, { rate: 1000 });
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/search', headers: { authorization: customer.token }, payload: { vin: SAMPLE_VIN } });
    expect(res.statusCode).toBe(200);
    reportPath = new URL(res.json<{ report_url: string }>().report_url).pathname;
    digest = (await t.app.services.verification.signed(reportPath.split('/').pop()!))!.digest;
    origin = await t.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('shows the QR code of the report address and the digest on the page, readable and accessible', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 }, colorScheme: 'light' });
    const response = await page.goto(`${origin}${reportPath}`, { waitUntil: 'load' });
    expect(response?.status()).toBe(200);
    const section = page.locator('section.verification');
    await expect(section.locator('h2').textContent()).resolves.toBe('Check that this report is genuine');
    await expect(section.locator('[data-digest]').textContent()).resolves.toBe(digest);
    expect(await section.getByRole('link', { name: 'Signed data (JSON)' }).getAttribute('href')).toBe(`${reportPath}.json`);
    expect(await axeViolations(page)).toEqual([]);
    const shot = path.join(SCREENSHOTS, 'report-verification-desktop.png');
    await section.screenshot({ path: shot });
    expect(qrCodes(shot)).toEqual([`https://vinhistory.test${reportPath}`]);
    await page.close();
  });

  it('prints the QR code and the digest at the foot of every PDF page, and names the report in the document information', async () => {
    const res = await t.app.inject({ remoteAddress: reader(), url: `${reportPath}.pdf?lang=en&paper=a4` });
    expect(res.statusCode).toBe(200);
    const pdf = path.join(dir, 'report.pdf');
    writeFileSync(pdf, res.rawPayload);
    // Each page's foot alone (A4 at 150 dpi is 1,754 pixels high; the footer is its last 16 mm), in grey: what zbarimg needs, quickly.
    execFileSync('pdftoppm', ['-png', '-gray', '-r', '150', '-y', '1600', '-H', '154', '-W', '1240', pdf, path.join(dir, 'page')]);
    const pngs = readdirSync(dir).filter((file) => /^page-\d+\.png$/.test(file)).sort();
    expect(pngs.length).toBeGreaterThanOrEqual(2);
    for (const png of pngs) expect(qrCodes(path.join(dir, png))).toEqual([`https://vinhistory.test${reportPath}`]);
    const texts = execFileSync('pdftotext', [pdf, '-'], { encoding: 'utf8' }).split('\f').filter((text) => text.trim() !== '');
    expect(texts).toHaveLength(pngs.length);
    texts.forEach((text, i) => expect(text).toMatch(new RegExp(`Page ${i + 1} of ${texts.length}\\s+Fingerprint \\(SHA-256\\) ${digest}`)));
    expect(await readPdfStamp(res.rawPayload)).toEqual({ reportId: reportPath.split('/').pop(), reportUrl: `https://vinhistory.test${reportPath}`, digest });
    // The footer of the first page, as a reader sees it (docs/screenshots/).
    execFileSync('pdftoppm', ['-png', '-singlefile', '-r', '150', '-f', '1', '-l', '1', '-y', '1554', '-H', '200', '-W', '1240', pdf, path.join(SCREENSHOTS, 'report-pdf-footer')]);
  });

  it('says on /verify that the printed PDF, uploaded in a browser, is genuine, and what it said', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 }, colorScheme: 'light' });
    await page.goto(`${origin}/verify`, { waitUntil: 'load' });
    expect(await axeViolations(page)).toEqual([]);
    await page.setInputFiles('#verify-pdf', path.join(dir, 'report.pdf'));
    await Promise.all([page.waitForURL(`${origin}/verify`), page.getByRole('button', { name: 'Check' }).click()]);
    await expect(page.locator('#verify-verdict').textContent()).resolves.toBe('Genuine: this report was made and signed by us');
    expect(await page.locator('.verify-result').textContent()).toContain(digest);
    expect(await axeViolations(page)).toEqual([]);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'verify-genuine-desktop.png'), fullPage: true });
    await page.close();
  });

  it("puts the reseller's address in the QR code of a white-label report's PDF", async () => {
    const reseller = await createCustomer(t.repos, { rate: 1000 });
    await t.repos.brands.create(reseller.accountId, true, { name: 'Resale Motors', accent: null, contact: null, reportBaseUrl: 'https://reports.resale.example' }, new Date(), BRAND_LIMITS.namedBrands);
    const search = await t.app.inject({ method: 'POST', url: '/api/v1/search', headers: { authorization: reseller.token }, payload: { vin: SAMPLE_VIN } });
    const branded = new URL(search.json<{ report_url: string }>().report_url);
    expect(branded.origin).toBe('https://reports.resale.example');
    const res = await t.app.inject({ remoteAddress: reader(), url: `${branded.pathname}.pdf?lang=ar&paper=letter` });
    expect(res.statusCode).toBe(200);
    const pdf = path.join(dir, 'branded.pdf');
    writeFileSync(pdf, res.rawPayload);
    // Letter at 150 dpi is 1,650 pixels high.
    execFileSync('pdftoppm', ['-png', '-gray', '-r', '150', '-f', '1', '-l', '1', '-y', '1496', '-H', '154', '-W', '1275', pdf, path.join(dir, 'branded')]);
    const png = readdirSync(dir).find((file) => file.startsWith('branded') && file.endsWith('.png'))!;
    expect(qrCodes(path.join(dir, png))).toEqual([branded.href]);
  });
});
