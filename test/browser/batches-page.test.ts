import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { migrateToLatest, openDatabase, type Db } from '../../src/storage/database.ts';
import { createRepositories, type Repositories } from '../../src/storage/repositories/index.ts';
import { MemoryRateLimiter } from '../../src/limits/rate/memory-rate-limiter.ts';
import type { App } from '../../src/app.ts';
import { buildAppOn } from '../support/app.ts';
import { TEST_SCRYPT, WebClient } from '../support/customer-app.ts';
import { makeLot, validVin } from '../support/fixtures.ts';
import { freePort } from '../cli/run-cli.ts';
import { axeViolations, launchChromium, lowContrastTexts, runnable, SCREENSHOTS } from './support.ts';

const CONTRAST = { skip: '.visually-hidden, .skip-link, [hidden], details:not([open]) > :not(summary)', skipUndisplayed: true };
const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1366, height: 900 };

/** The account's batch page in Chromium: upload a CSV, watch the progress, download results and the PDFs; axe, contrast, screenshots. */
describe.skipIf(!runnable)('the batches page in a browser', () => {
  let browser: Browser;
  let app: App;
  let db: Db;
  let repos: Repositories;
  let origin: string;
  let dataDir: string;
  const rateLimiter = new MemoryRateLimiter();

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vinhistory-batches-page-'));
    const port = await freePort();
    origin = `http://127.0.0.1:${port}`;
    const config = loadConfig({ NODE_ENV: 'test', PUBLIC_BASE_URL: origin, DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
    db = await openDatabase(config.database);
    await migrateToLatest(db);
    repos = createRepositories(db);
    app = await buildAppOn({ config, db, rateLimiter, overrides: { passwordCost: TEST_SCRYPT, batchRunner: { pollMs: 50 } } });
    await app.listen({ port, host: '127.0.0.1' });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await rateLimiter.close();
    await db?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  async function check(page: Page, name: string): Promise<void> {
    for (const [suffix, viewport] of [['phone', PHONE], ['desktop', DESKTOP]] as const) {
      await page.setViewportSize(viewport);
      const widths = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, inner: window.innerWidth }));
      expect(widths.scroll, `${name} overflows sideways at ${viewport.width}px`).toBeLessThanOrEqual(widths.inner);
      expect(await axeViolations(page), `${name} at ${viewport.width}px`).toEqual([]);
      expect(await lowContrastTexts(page, CONTRAST), `${name} at ${viewport.width}px`).toEqual([]);
      await page.screenshot({ path: path.join(SCREENSHOTS, `account-batches-${name}-${suffix}.png`), fullPage: true });
    }
  }

  it('uploads a CSV, shows the batch finishing, and downloads its results and the PDFs of its reports', async () => {
    const found = [validVin('1FTFW1ET5DFR0001'), validVin('1FTFW1ET5DFR0002')];
    await repos.lots.upsertBatch(found.map((vin) => makeLot({ vin, auction: 'copart', brand: 'FORD' })));
    const client = new WebClient(app);
    const email = `dealer-${Math.random().toString(36).slice(2, 8)}@example.com`;
    await client.signUp(email);
    const account = (await repos.accounts.findByEmail(email))!;
    await repos.subscriptions.create({ accountId: account.id, planCode: 'vip', billing: 'monthly', startedAt: new Date(Date.now() - 86_400_000) });
    await client.createToken({ name: 'Tuesday sale' });

    const context = await browser.newContext({ colorScheme: 'light', locale: 'en-US', viewport: DESKTOP, acceptDownloads: true });
    await context.route((url) => url.origin !== origin && url.protocol !== 'data:', (route) => route.abort());
    await context.addCookies([...client.cookies].map(([name, value]) => ({ name, value, url: origin })));
    const page = await context.newPage();
    await page.goto(`${origin}/account/batches`);
    expect(await page.getByText('No batches yet.').isVisible()).toBe(true);
    await check(page, 'empty');

    await page.getByLabel('CSV file').setInputFiles({ name: 'tuesday.csv', mimeType: 'text/csv', buffer: Buffer.from(`stock,vin\n1,${found[0]}\n2,NOT-A-VIN\n3,${found[1]}\n`) });
    await page.getByRole('button', { name: 'Start the batch' }).click();
    await page.waitForURL(`${origin}/account/batches?done=created`);
    expect(await page.getByText('The batch is queued').isVisible()).toBe(true);
    // The page polls the batch's progress: started now, it finishes while the page shows it.
    app.services.batchRunner.start();
    await page.waitForSelector('[data-batch-status="done"]', { timeout: 20_000 });
    expect(await page.locator('[data-batch-done]').textContent()).toBe('3');
    expect(await page.locator('[data-batch-counts]').textContent()).toBe('2 × 200, 1 × 422');
    await check(page, 'done');

    const batchId = (await page.locator('td .mono').first().textContent())!;
    const csv = await page.evaluate(async (href) => (await fetch(href)).text(), `${origin}/account/batches/${batchId}/results.csv`);
    expect(csv.split('\n')[0]).toMatch(/^index,input,status,message,report_url,/);
    expect(csv).toContain(`0,${found[0]},200`);
    const zip = await page.evaluate(async (href) => {
      const response = await fetch(href);
      return { type: response.headers.get('content-type'), bytes: Array.from(new Uint8Array(await response.arrayBuffer())) };
    }, `${origin}/account/batches/${batchId}/reports.zip`);
    expect(zip.type).toBe('application/zip');
    const text = Buffer.from(zip.bytes).toString('latin1');
    expect(text.startsWith('PK')).toBe(true);
    // Two found reports, two PDFs (by index: items 0 and 2).
    expect(text.match(/000[02]-[0-9a-f-]{36}\.[a-z]+/g), text.slice(0, 600)).toEqual(expect.arrayContaining([expect.stringMatching(/^0000-.*\.pdf$/), expect.stringMatching(/^0002-.*\.pdf$/)]));

    await page.goto(`${origin}/account/usage`);
    expect(await page.locator('dt', { hasText: 'Batch items' }).locator('xpath=following-sibling::dd').textContent()).toBe('3');
    await context.close();
  }, 90_000);
});
