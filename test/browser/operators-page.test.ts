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
import { freePort } from '../cli/run-cli.ts';
import { axeViolations, launchChromium, lowContrastTexts, runnable, SCREENSHOTS } from './support.ts';

const CONTRAST = { skip: '.visually-hidden, .skip-link, [hidden], details:not([open]) > :not(summary)', skipUndisplayed: true };
const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1366, height: 900 };

/** The operators' page in Chromium: log-in with the keyboard alone, axe and contrast at both widths, screenshots. */
describe.skipIf(!runnable)("the operators' page in a browser", () => {
  let browser: Browser;
  let app: App;
  let db: Db;
  let repos: Repositories;
  let origin: string;
  let dataDir: string;
  const rateLimiter = new MemoryRateLimiter();

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vinhistory-operators-'));
    const port = await freePort();
    origin = `http://127.0.0.1:${port}`;
    const config = loadConfig({ NODE_ENV: 'test', PUBLIC_BASE_URL: origin, DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
    db = await openDatabase(config.database);
    await migrateToLatest(db);
    repos = createRepositories(db);
    app = await buildAppOn({ config, db, rateLimiter });
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
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      for (const [suffix, viewport] of [['phone', PHONE], ['desktop', DESKTOP]] as const) {
        await page.setViewportSize(viewport);
        const widths = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, inner: window.innerWidth }));
        expect(widths.scroll, `${name} overflows sideways at ${viewport.width}px (${scheme})`).toBeLessThanOrEqual(widths.inner);
        expect(await axeViolations(page), `${name} at ${viewport.width}px (${scheme})`).toEqual([]);
        expect(await lowContrastTexts(page, CONTRAST), `${name} at ${viewport.width}px (${scheme})`).toEqual([]);
        if (scheme === 'light') await page.screenshot({ path: path.join(SCREENSHOTS, `operators-${name}-${suffix}.png`), fullPage: true });
      }
    }
    await page.emulateMedia({ colorScheme: 'light' });
  }

  it('logs in with the keyboard, lists accounts and invoices, and marks an invoice paid', async () => {
    const { token } = await repos.operatorTokens.create('night-desk');
    for (const [email, plan] of [['fleet@dealer.example', 'vip'], ['buyer@importer.example', 'standard']] as const) {
      const account = await repos.accounts.create(email);
      await repos.subscriptions.create({ accountId: account.id, planCode: plan, billing: 'monthly', startedAt: new Date(Date.now() - 3 * 86_400_000) });
    }
    const waiting = await repos.accounts.create('new-customer@bots.example');
    const invoice = await repos.invoices.create({
      accountId: waiting.id, provider: 'manual', kind: 'subscribe', planCode: 'professional', billing: 'monthly', amountCents: 15000, currency: 'usd',
      description: 'Professional', subscriptionId: null, buyer: { company: null, address: null, taxId: null },
    });

    // Two feeds, so that the feeds' table is checked and shown too.
    for (const name of ['copart-members', 'vendor-api']) {
      await app.services.feeds.add({ name, url: `https://feeds.example.com/${name}.ndjson`, format: 'ndjson', every: '15m' });
    }
    await app.services.feeds.pause('vendor-api', true);

    const context = await browser.newContext({ colorScheme: 'light', locale: 'en-US', viewport: DESKTOP });
    await context.route((url) => url.origin !== origin && url.protocol !== 'data:', (route) => route.abort());
    const page = await context.newPage();
    await page.goto(`${origin}/admin`);
    await check(page, 'login');

    // Keyboard only: skip link, then the token field and the button by Tab.
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    let focused = await page.evaluate(() => document.activeElement?.id ?? document.activeElement?.tagName);
    for (let i = 0; i < 10 && focused !== 'operator-token'; i++) {
      await page.keyboard.press('Tab');
      focused = await page.evaluate(() => document.activeElement?.id ?? document.activeElement?.tagName);
    }
    expect(focused).toBe('operator-token');
    await page.keyboard.type(token);
    await page.keyboard.press('Enter');
    // The log-in page and the dashboard share /admin: wait for the dashboard's own section.
    await page.waitForSelector('#accounts-title');
    expect(await page.getByRole('table', { name: 'Accounts, newest first' }).isVisible()).toBe(true);
    expect(await page.getByText('fleet@dealer.example').isVisible()).toBe(true);
    expect(await page.getByRole('table', { name: 'Feeds by name: their state, ages and last error' }).isVisible()).toBe(true);
    await check(page, 'dashboard');

    await page.getByRole('button', { name: `Mark paid ${invoice.reference}` }).click();
    await page.waitForURL(`${origin}/admin?notice=paid`);
    expect(await page.getByRole('status').textContent()).toContain('The invoice is marked paid');
    expect((await repos.invoices.findById(invoice.id))?.status).toBe('paid');
    expect((await repos.operatorAudit.page({ limit: 1, target: invoice.id }))[0]).toMatchObject({ actor: 'token:night-desk', action: 'invoice.pay' });
    await context.close();
  });
});
