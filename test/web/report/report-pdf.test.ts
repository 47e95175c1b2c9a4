import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, testConfig, type TestApp } from '../../support/app.ts';
import { createCustomer, makeLot, validVin, type Customer } from '../../support/fixtures.ts';
import { IN_CI } from '../../support/env.ts';

const CHROMIUM = '/usr/bin/chromium';
const runnable = existsSync(CHROMIUM) || IN_CI;

/** A 1x1 PNG: a photo the local server answers with. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==', 'base64');

function pageCount(pdf: Buffer, dir: string): number {
  const file = path.join(dir, `${randomUUID()}.pdf`);
  writeFileSync(file, pdf);
  const info = execFileSync('pdfinfo', [file], { encoding: 'utf8' });
  return Number(/^Pages:\s+(\d+)/m.exec(info)?.[1]);
}

function pdfText(pdf: Buffer, dir: string): string {
  const file = path.join(dir, `${randomUUID()}.pdf`);
  writeFileSync(file, pdf);
  return execFileSync('pdftotext', [file, '-'], { encoding: 'utf8' });
}

/** A reader of its own for each PDF: these tests print faster than one reader may (the pdfPrints guard, test/web/report/report-pdf-bounds.test.ts). */
let readers = 0;
const reader = () => `198.18.${Math.floor(++readers / 250)}.${(readers % 250) + 1}`;

describe.runIf(runnable)('report PDF', () => {
  let t: TestApp;
  let customer: Customer;
  let dataDir: string;
  let photos: Server;
  let photoRequests = 0;
  const vin = validVin('1FTFW1ET5DFC7777');

  const reportPath = async () => {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/search', headers: { authorization: customer.token }, payload: { vin } });
    expect(res.statusCode).toBe(200);
    return new URL(res.json().report_url as string).pathname;
  };

  beforeAll(async () => {
    photos = createServer((request, response) => {
      photoRequests++;
      if (request.url?.startsWith('/missing')) return response.writeHead(404).end();
      response.writeHead(200, { 'content-type': 'image/png' }).end(PNG);
    });
    await new Promise<void>((resolve) => photos.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(photos.address() as AddressInfo).port}`;
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'vinhistory-pdf-'));
    t = await createTestApp('sqlite', { config: testConfig({ DATA_DIR: dataDir, OUTBOUND_ALLOW_PRIVATE: 'true', PDF_PHOTO_BUDGET_MS: '2000' }) });
    customer = await createCustomer(t.repos, { rate: 1000 });
    await t.repos.lots.upsertBatch([
      makeLot({ vin, auction: 'copart', lot_id: 41000001, sale_date: '2024-06-12T15:30:00.000Z', name: '2013 FORD F-150', year: 2013, price: 12345, odometer: 172691, odometer_type: 'NOT ACTUAL', primary_damage: 'WATER/FLOOD', document: 'SC - SALVAGE CERTIFICATE (TX)', images: [`${base}/1.png`, `${base}/missing.png`] }),
      makeLot({ vin, auction: 'iaai', lot_id: 35000002, sale_date: '2023-01-05T00:00:00.000Z', price: 3100, odometer: 180000, images: [`${base}/2.png`] }),
    ]);
  });
  afterAll(async () => {
    await t?.close();
    await new Promise((resolve) => photos?.close(resolve));
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('sends a PDF address without language and paper on to the full one', async () => {
    const page = await reportPath();
    const res = await t.app.inject({ url: `${page}.pdf`, headers: { 'accept-language': 'uk-UA,uk;q=0.9,en;q=0.5' } });
    expect(res.statusCode).toBe(302);
    expect(res.headers.location).toBe(`${page}.pdf?lang=uk&paper=a4`);
    expect(res.headers['cache-control']).toBe('no-store');
    const american = await t.app.inject({ remoteAddress: reader(), url: `${page}.pdf?lang=es`, headers: { 'accept-language': 'en-US,en;q=0.9' } });
    expect(american.headers.location).toBe(`${page}.pdf?lang=es&paper=letter`);
  });

  it.each([
    ['en', 'a4'],
    ['ka', 'letter'],
    ['ar', 'a4'],
  ])('prints a real PDF in %s on %s, cached afterwards', async (lang, paper) => {
    const page = await reportPath();
    const url = `${page}.pdf?lang=${lang}&paper=${paper}`;
    const before = photoRequests;
    const res = await t.app.inject({ remoteAddress: reader(), url });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/pdf');
    expect(res.headers['cache-control']).toBe('private, max-age=31536000, immutable');
    expect(res.headers['content-language']).toBe(lang);
    expect(res.rawPayload.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    expect(pageCount(res.rawPayload, dataDir)).toBeGreaterThanOrEqual(1);
    // The photos were fetched (the one that answers 404 is drawn as a placeholder).
    expect(photoRequests - before).toBe(3);

    // The second time the file comes from the cache: no photo fetched, the same bytes.
    const again = await t.app.inject({ remoteAddress: reader(), url });
    expect(again.statusCode).toBe(200);
    expect(again.rawPayload.equals(res.rawPayload)).toBe(true);
    expect(photoRequests - before).toBe(3);
  });

  it('puts the brand, the report id and time, and the page numbers at the foot of every page', async () => {
    const page = await reportPath();
    const id = page.split('/').pop()!;
    const res = await t.app.inject({ remoteAddress: reader(), url: `${page}.pdf?lang=en&paper=a4` });
    expect(res.statusCode).toBe(200);
    const pages = pdfText(res.rawPayload, dataDir).split('\f').filter((text) => text.trim() !== '');
    expect(pages.length).toBe(pageCount(res.rawPayload, dataDir));
    pages.forEach((text, i) => expect(text).toMatch(new RegExp(`vinhistory · Report ${id}, made at .+ · Page ${i + 1} of ${pages.length}`)));
    // Not a sandbox report: no test marker.
    expect(pages[0]).not.toContain('Test report');
  });

  it('marks a sandbox report as a test report in its PDF, in the reader’s language', async () => {
    const { token } = await t.repos.tokens.create(customer.accountId, 'sandbox', new Date(), 'test');
    const search = await t.app.inject({ method: 'POST', url: '/api/v1/search', headers: { authorization: token }, payload: { vin: '4T1BF1FK7FU900011' } });
    expect(search.statusCode).toBe(200);
    const page = new URL(search.json().report_url as string).pathname;
    const en = await t.app.inject({ remoteAddress: reader(), url: `${page}.pdf?lang=en&paper=a4` });
    expect(en.statusCode).toBe(200);
    expect(pdfText(en.rawPayload, dataDir)).toContain('Test report');
    const uk = await t.app.inject({ remoteAddress: reader(), url: `${page}.pdf?lang=uk&paper=a4` });
    expect(pdfText(uk.rawPayload, dataDir)).toContain('Тестовий звіт');
  });

  it('answers an unknown report with the 404 page', async () => {
    const res = await t.app.inject({ url: `/report/${randomUUID()}.pdf?lang=en&paper=a4` });
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
  });
});

describe('report PDF without a browser', () => {
  let t: TestApp;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'vinhistory-pdf-'));
    t = await createTestApp('sqlite', { config: testConfig({ DATA_DIR: dataDir, PDF_BROWSER_PATH: path.join(dataDir, 'no-such-browser') }) });
  });
  afterAll(async () => {
    await t?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers 503 with a page saying so, and the report page still works', async () => {
    const customer = await createCustomer(t.repos, { rate: 1000 });
    const vin = validVin('1FTFW1ET5DFC7777');
    await t.repos.lots.upsertBatch([makeLot({ vin, auction: 'copart', lot_id: 1 })]);
    const search = await t.app.inject({ method: 'POST', url: '/api/v1/search', headers: { authorization: customer.token }, payload: { vin } });
    const page = new URL(search.json().report_url as string).pathname;
    const res = await t.app.inject({ remoteAddress: reader(), url: `${page}.pdf?lang=en&paper=a4` });
    expect(res.statusCode).toBe(503);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).toContain('The PDF cannot be made right now');
    expect((await t.app.inject({ url: page })).statusCode).toBe(200);
  });
});
