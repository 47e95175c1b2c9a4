/// <reference lib="dom" />
// The functions passed to page.evaluate run in the browser; the DOM types check them.
import { lotJson } from '../../src/domain/lot.ts';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { migrateToLatest, openDatabase, type Db } from '../../src/storage/database.ts';
import { createRepositories, type Repositories } from '../../src/storage/repositories/index.ts';
import { MemoryRateLimiter } from '../../src/limits/rate/memory-rate-limiter.ts';
import { PasswordHasher } from '../../src/accounts/password-hasher.ts';
import { TEST_SCRYPT } from '../support/customer-app.ts';
import { buildAppOn } from '../support/app.ts';
import { paidInvoice, signedEvent, STRIPE_ENV, StripeStub } from '../billing/stripe-fixtures.ts';
import { makeLot, principalAt } from '../support/fixtures.ts';
import { runCliInProcess, type CliResult } from '../cli/run-cli.ts';
import { axeViolations, launchChromium, lowContrastTexts, runnable, SCREENSHOTS } from './support.ts';

/** The contrast check passes over text nobody sees: hidden, undisplayed, or in closed details. */
const CONTRAST = { skip: '.visually-hidden, .skip-link, [hidden], details:not([open]) > :not(summary)', skipUndisplayed: true };

const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1366, height: 900 };
const VIN = '4JGBF7BE5AA585531';
const PASSWORD = 'a long journey passphrase';
const DAY_MS = 24 * 60 * 60 * 1000;
const SELLER_ENV = {
  SELLER_NAME: 'Acme Vehicle Data Ltd',
  SELLER_ADDRESS: '1 Dock Road\\nLondon E16 1AA\\nUnited Kingdom',
  SELLER_TAX_ID: 'GB123456789',
  SELLER_BANK_DETAILS: 'IBAN GB33 BUKB 2020 1555 5555 55\\nBIC BUKBGB22',
  SUPPORT_EMAIL: 'help@acme.example',
};

/** A real app on a SQLite file in its own DATA_DIR (the CLI opens the same file), listening on 127.0.0.1. */
interface Running {
  app: App;
  db: Db;
  repos: Repositories;
  origin: string;
  dataDir: string;
  close(): Promise<void>;
}

async function freePort(): Promise<number> {
  const { createServer } = await import('node:net');
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function startApp(env: Record<string, string> = {}, stripe?: StripeStub): Promise<Running> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vinhistory-journey-'));
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const config = loadConfig({ NODE_ENV: 'test', PUBLIC_BASE_URL: origin, DATA_DIR: dataDir, LOG_LEVEL: 'silent', ...env });
  if (config.database.kind !== 'sqlite') throw new Error('the journey runs on the embedded SQLite database');
  const db = await openDatabase(config.database);
  await migrateToLatest(db);
  const repos = createRepositories(db);
  const rateLimiter = new MemoryRateLimiter();
  const app = await buildAppOn({
    config,
    db,
    rateLimiter,
    overrides: {
      passwordCost: TEST_SCRYPT,
      ...(stripe ? { stripeApiBase: { host: '127.0.0.1', port: stripe.port, protocol: 'http' as const }, stripeCheckoutOrigin: stripe.origin } : {}),
    },
  });
  await app.listen({ port, host: '127.0.0.1' });
  return {
    app,
    db,
    repos,
    origin,
    dataDir,
    close: async () => {
      await app.close();
      await rateLimiter.close();
      await db.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * `vinhistory ...` on the app's DATA_DIR, as the operator runs it: the CLI's main(argv) in this
 * process (test/cli/run-cli.ts), the same program on the same database file without a node start
 * and a load of the sources for each command (2-5 s each on a loaded machine).
 */
function cli(dataDir: string, ...args: string[]): Promise<CliResult> {
  return runCliInProcess(args, { dataDir });
}

/**
 * A search with a token, as a customer's code makes it: the Standard plan allows 2 a second, so a
 * 429 for the rate is waited out (Retry-After) like a well-behaved client does.
 */
async function searchWith(origin: string, token: string, vin = VIN): Promise<Response> {
  for (let attempt = 0; ; attempt++) {
    const response = await fetch(`${origin}/api/v1/search?vin=${vin}`, { headers: { authorization: token } });
    if (response.status !== 429 || attempt === 3) return response;
    await new Promise((resolve) => setTimeout(resolve, Number(response.headers.get('retry-after') ?? 1) * 1000));
  }
}

describe.skipIf(!runnable)('the customer journey in a browser', () => {
  let browser: Browser;
  const cspViolations: string[] = [];
  const pageErrors: string[] = [];
  const consoleErrors: string[] = [];

  beforeAll(async () => {
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
  });

  async function newContext(origin: string, allowed: string[] = []): Promise<BrowserContext> {
    const context = await browser.newContext({ colorScheme: 'light', locale: 'en-US', viewport: DESKTOP });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
    // Nothing leaves the machine but the app (and a stand-in the test names).
    await context.route((url) => url.origin !== origin && !allowed.includes(url.origin) && url.protocol !== 'data:', (route) => route.abort());
    context.on('page', (page) => {
      page.on('console', (message) => {
        if (/Content Security Policy/i.test(message.text())) cspViolations.push(message.text());
        // Chromium logs every non-2xx answer as a console error; the journey's intended ones (a form
        // sent with a mistake answers 422, "try it" without a valid token 401, "try it" of a lot not
        // known 404 on the API reference) are not faults.
        else if (
          message.type() === 'error' &&
          !/Failed to load resource: the server responded with a status of (401|422)\b/.test(message.text()) &&
          !(page.url().endsWith('/docs') && /Failed to load resource: the server responded with a status of 404\b/.test(message.text()))
        ) {
          consoleErrors.push(`${page.url()}: ${message.text()}`);
        }
      });
      page.on('pageerror', (error) => pageErrors.push(error.message));
    });
    return context;
  }

  /**
   * Every page of the journey, at phone and desktop width and in the light and dark schemes: no
   * sideways overflow, no axe violation of impact serious or critical, no text below AA contrast;
   * then full-page screenshots (light) for docs/account.md.
   *
   * `reopen`: the page is what its address shows (a GET of a view, no form filled, no message shown
   * once), so the four looks run at once, each in a page of its own opened at that address in the
   * same context (the same session, every page listened to for CSP and console errors), instead of
   * one after another on the one page. A look at a long page takes seconds (axe and a full-page
   * screenshot of the API reference, 7 s a look on a loaded machine), and the browser has a
   * process per page to spread them over. Each reopened page must hold the same text as the one
   * it stands for, so a page that is not what its address shows fails instead of passing unseen.
   * Only for the long pages (the reference, usage): on a short one the four extra loads cost
   * about what the looks do, and the journey's CPU went up 10-20% with every page reopened.
   */
  async function capture(page: Page, name: string, options: { screenshot?: boolean; reopen?: boolean } = {}): Promise<void> {
    const look = async (target: Page, scheme: 'light' | 'dark', suffix: 'phone' | 'desktop', viewport: { width: number; height: number }) => {
      const widths = await target.evaluate(() => ({ scroll: document.documentElement.scrollWidth, inner: window.innerWidth }));
      expect(widths.scroll, `${name} overflows sideways at ${viewport.width}px (${scheme})`).toBeLessThanOrEqual(widths.inner);
      expect(await axeViolations(target), `${name} at ${viewport.width}px (${scheme})`).toEqual([]);
      expect(await lowContrastTexts(target, CONTRAST), `${name} at ${viewport.width}px (${scheme})`).toEqual([]);
      if (scheme === 'light' && options.screenshot !== false) await target.screenshot({ path: path.join(SCREENSHOTS, `account-${name}-${suffix}.png`), fullPage: true });
    };
    const looks = (['light', 'dark'] as const).flatMap((scheme) => ([['phone', PHONE], ['desktop', DESKTOP]] as const).map(([suffix, viewport]) => ({ scheme, suffix, viewport })));
    if (options.reopen) {
      const text = await page.evaluate(() => document.body.textContent);
      await Promise.all(
        looks.map(async ({ scheme, suffix, viewport }) => {
          const twin = await page.context().newPage();
          try {
            await twin.setViewportSize(viewport);
            await twin.emulateMedia({ colorScheme: scheme });
            expect((await twin.goto(page.url()))?.status(), `${name} reopened`).toBe(200);
            expect(await twin.evaluate(() => document.body.textContent), `${name} reopened shows what the journey saw`).toBe(text);
            await look(twin, scheme, suffix, viewport);
          } finally {
            await twin.close();
          }
        }),
      );
      return;
    }
    const size = page.viewportSize();
    for (const { scheme, suffix, viewport } of looks) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.setViewportSize(viewport);
      await look(page, scheme, suffix, viewport);
    }
    await page.emulateMedia({ colorScheme: 'light' });
    if (size) await page.setViewportSize(size);
  }

  it('manual invoices: sign up with the plan chosen first, invoice with seller and buyer, paid by the operator, token, search, usage, report, rotate, revoke, log out, docs, delete', async () => {
    const run = await startApp(SELLER_ENV);
    try {
      await run.repos.lots.upsertBatch([
        makeLot({ vin: VIN, auction: 'copart', lot_id: 26519090, sale_date: '2024-03-14T18:00:00.000Z', name: '2010 MERCEDES-BENZ GL 450 4MATIC', year: 2010, price: 9850, odometer: 172691, primary_damage: 'SIDE' }),
        makeLot({ vin: VIN, auction: 'iaai', lot_id: 45289258, sale_date: '2022-08-02T15:30:00.000Z', price: 14500, odometer: 151020, primary_damage: 'REAR' }),
      ]);
      const context = await newContext(run.origin);
      const page = await context.newPage();
      const { origin } = run;

      // Landing page: the VIN box says what a report holds, without JavaScript.
      await page.goto(`${origin}/`);
      await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toMatch(/auction/i);
      await page.getByRole('textbox', { name: 'VIN' }).fill(VIN.toLowerCase());
      await page.getByRole('button', { name: 'Check' }).click();
      await page.waitForURL(/\?vin=/);
      expect(await page.getByRole('status').textContent()).toMatch(/2 auction records[\s\S]*From Copart and IAAI/);
      expect(await page.getByRole('link', { name: `Get the full report for ${VIN}` }).count()).toBe(1);
      await capture(page, 'landing');
      await page.getByRole('textbox', { name: 'VIN' }).fill('4JGBF7BE5AA58553');
      await page.getByRole('textbox', { name: 'VIN' }).press('Enter');
      await page.waitForURL(/vin=4JGBF7BE5AA58553(#check)?$/);
      expect(await page.locator('#vin-error').textContent()).toContain('exactly 17 characters');
      expect(await page.getByRole('textbox', { name: 'VIN' }).getAttribute('aria-invalid')).toBe('true');

      // Pricing: three plans, Standard the favourite, annual prices with the discount.
      await page.getByRole('navigation', { name: 'Site' }).getByRole('link', { name: 'Pricing' }).click();
      await page.waitForURL(/\/pricing$/);
      expect(await page.locator('.plan__name').allTextContents()).toEqual(['Standard', 'Professional', 'VIP']);
      expect(await page.locator('.plan--favourite .plan__name').textContent()).toBe('Standard');
      expect(await page.locator('.plan--favourite .plan__badge').textContent()).toBe('Most popular');
      await page.getByRole('link', { name: /Annual/ }).click();
      await page.waitForURL(/billing=annual/);
      expect(await page.locator('.plan__amount').allTextContents()).toEqual(['$600', '$1,440', '$3,840']);
      expect(await page.locator('.plan__note').nth(1).textContent()).toContain('20% less than monthly');
      await capture(page, 'pricing');
      await page.getByRole('link', { name: 'Monthly' }).click();
      await page.waitForURL(/\/pricing$/);

      // Choosing a plan sends a new visitor to sign-up, which names the plan, and comes back to the choice.
      await page.getByRole('link', { name: 'Choose Standard' }).click();
      await page.waitForURL(/\/signup\?next=/);
      expect(await page.locator('.chosen-plan').textContent()).toContain('Standard');
      // The terms, from the sign-up form's link.
      await page.getByRole('link', { name: 'Terms of Service' }).first().click();
      await page.waitForURL(/\/terms$/);
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Terms of Service');
      await capture(page, 'terms');
      await page.goBack();
      await page.waitForURL(/\/signup\?next=/);
      const email = 'journey@example.com';
      // A mistake first: the form says what is wrong, next to the field.
      await page.getByLabel('Email address').fill(email);
      await page.getByLabel('Password').fill('short');
      await page.getByRole('button', { name: 'Create account' }).click();
      await expect(page.locator('#signup-password-error').textContent()).resolves.toContain('at least 10 characters');
      expect(await page.locator('#signup-terms-error').textContent()).toContain('Accept the Terms of Service');
      await capture(page, 'signup');
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('checkbox', { name: /I accept the Terms of Service/ }).check();
      await page.getByRole('button', { name: 'Create account' }).click();
      await page.waitForURL(/\/account\/billing\?plan=standard&billing=monthly&done=welcome/);
      expect(await page.getByRole('status').first().textContent()).toContain('Welcome to vinhistory');
      expect(await page.getByRole('heading', { name: 'Subscribe to Standard' }).count()).toBe(1);
      expect(await page.getByRole('button', { name: 'Choose Standard' }).count()).toBe(0);
      await page.getByLabel('Company').fill('Journey Motors GmbH');
      await page.getByLabel('Billing address').fill('Hauptstraße 1\n10115 Berlin\nGermany');
      await page.getByLabel('Tax id (VAT number)').fill('DE123456789');
      await capture(page, 'checkout');
      await page.getByRole('button', { name: 'Get the invoice' }).click();
      await page.waitForURL(/\/account\/billing\/invoices\/inv_/);
      const reference = (await page.locator('.invoice__reference').textContent())!.trim();
      expect(reference).toMatch(/^VH-[0-9A-Z]{4}-[0-9A-Z]{4}$/);
      expect(await page.locator('.badge').first().textContent()).toBe('Awaiting payment');
      expect(await page.locator('.invoice__lines tfoot').textContent()).toContain('$50.00');
      const parties = await page.locator('.invoice__parties').textContent();
      for (const part of ['Acme Vehicle Data Ltd', '1 Dock Road', 'GB123456789', 'Journey Motors GmbH', '10115 Berlin', 'DE123456789', email]) expect(parties).toContain(part);
      expect(await page.locator('.invoice__facts').textContent()).toMatch(/Due[A-Z][a-z]{2} \d{1,2}, \d{4}/);
      expect(await page.locator('.pay').textContent()).toContain('IBAN GB33 BUKB 2020 1555 5555 55');

      // Unpaid, the overview names the plan and its invoice.
      await page.goto(`${origin}/account`);
      expect(await page.locator('.status--warn').textContent()).toContain('Standard: awaiting payment');
      expect(await page.getByRole('link', { name: 'Choose a plan' }).count()).toBe(0);
      await capture(page, 'dashboard-unpaid');
      await page.getByRole('link', { name: 'View invoice' }).click();
      await page.waitForURL(/\/account\/billing\/invoices\/inv_/);

      // The operator's payee (`invoices payee`) wins over SELLER_BANK_DETAILS on the invoice.
      const payee = await cli(run.dataDir, 'invoices', 'payee', 'vinhistory Ltd, IBAN GB99 PAYE 0000 1111 2222 33');
      expect(payee.code, payee.stderr).toBe(0);
      await page.reload();
      expect(await page.locator('.pay').textContent()).toContain('IBAN GB99 PAYE 0000 1111 2222 33');
      await capture(page, 'invoice');
      // Printed (or saved as PDF) it is the document alone: no site header, tabs or buttons.
      await page.emulateMedia({ media: 'print' });
      expect(await page.locator('.site-header').isVisible()).toBe(false);
      expect(await page.locator('.tabs').isVisible()).toBe(false);
      expect(await page.locator('.invoice__cancel').isVisible()).toBe(false);
      expect(await page.locator('.invoice__parties').isVisible()).toBe(true);
      // docs/screenshots/account-invoice-print.png is its first page: `pdftoppm -png -r 60 -singlefile`.
      await page.pdf({ path: path.join(SCREENSHOTS, 'account-invoice-print.pdf'), format: 'A4', printBackground: true });
      await page.emulateMedia({ media: null });
      const listed = await cli(run.dataDir, 'invoices', 'list', '--status', 'open');
      expect(listed.stdout).toContain(reference);
      const paid = await cli(run.dataDir, 'invoices', 'pay', reference.toLowerCase());
      expect(paid.code, paid.stderr).toBe(0);
      expect(paid.stdout).toMatch(/paid: \$50\.00\nsubscription sub_\w+ started: standard, monthly/);
      await page.reload();
      expect(await page.locator('.badge').first().textContent()).toBe('Paid');

      // The account: the plan is in force.
      await page.getByRole('navigation', { name: 'Account sections' }).getByRole('link', { name: 'Overview' }).click();
      await page.waitForURL(/\/account$/);
      expect(await page.locator('#plan-title + .stat').textContent()).toBe('Standard');
      await page.getByRole('link', { name: 'Plan and billing' }).first().click();
      await page.waitForURL(/\/account\/billing$/);
      expect(await page.locator('.current-plan .status').textContent()).toMatch(/^Paid through /);
      expect(await page.locator('.plan--current .plan__current').textContent()).toBe('Your plan');
      await capture(page, 'billing');

      // Tokens: create one, shown once, copied with the button.
      await page.getByRole('link', { name: 'API tokens' }).click();
      await page.getByLabel('Name').fill('production server');
      await page.getByRole('button', { name: 'Create token' }).click();
      await page.waitForURL(/\/account\/tokens\?done=created#created$/);
      const token = (await page.locator('#new-token').textContent())!.trim();
      // The curl line carries the new token itself.
      expect(await page.locator('#use-title ~ .code-block').textContent()).toContain(`Authorization: ${token}`);
      expect(token).toMatch(/^vh_live_[0-9A-Za-z]{32}$/);
      await page.getByRole('button', { name: 'Copy' }).click();
      await page.getByRole('button', { name: 'Copied' }).waitFor();
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(token);
      expect(await page.locator('.table tbody tr').count()).toBe(1);
      expect(await page.locator('.table tbody tr td').nth(1).textContent()).toBe(`${token.slice(0, 12)}…`);
      await capture(page, 'tokens');
      // Shown once: a reload (post/redirect/get: no form is sent again) shows the list, not the token.
      await page.reload();
      expect(await page.locator('#new-token').count()).toBe(0);
      expect(await page.content()).not.toContain(token);
      expect(await page.locator('.table tbody tr').count()).toBe(1);

      // The API answers with that token; the search shows in usage, with its report.
      const search = await searchWith(origin, token);
      expect(search.status).toBe(200);
      const report = (await search.json()) as { report_url: string; lots: unknown[] };
      expect(report.lots).toHaveLength(2);
      const missing = await fetch(`${origin}/api/v1/search`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ vin: '1HGCM82633A004352' }) });
      expect(missing.status).toBe(404);

      await page.getByRole('link', { name: 'Usage' }).click();
      await page.waitForURL(/\/account\/usage$/);
      expect(await page.locator('.meter__used').first().textContent()).toBe('2');
      expect(await page.locator('.chart__bar--today').getAttribute('height')).toBe('100');
      const rows = page.locator('#searches tbody tr');
      expect(await rows.count()).toBe(2);
      expect(await rows.nth(0).textContent()).toContain('1HGCM82633A004352');
      expect(await rows.nth(0).textContent()).toContain('No records');
      expect(await rows.nth(1).textContent()).toContain(VIN);
      expect(await rows.nth(1).textContent()).toContain('production server');
      await rows.nth(1).getByRole('link', { name: `Open report for ${VIN}` }).click();
      await page.waitForURL(/\/report\//);
      expect(new URL(page.url()).pathname).toBe(new URL(report.report_url).pathname);
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('2010 MERCEDES-BENZ GL 450 4MATIC');

      // Rotate: a new token, the old one still works for its grace period; then revoke.
      await page.goto(`${origin}/account/tokens`);
      await page.getByRole('button', { name: 'Rotate production server' }).click();
      await page.waitForURL(/done=rotated/);
      const rotated = (await page.locator('#new-token').textContent())!.trim();
      expect(rotated).not.toBe(token);
      expect(await page.locator('.token-reveal').textContent()).toMatch(/keeps working until .* \(24 hours\)/);
      for (const value of [token, rotated]) {
        expect((await searchWith(origin, value)).status).toBe(200);
      }
      await page.goto(`${origin}/account/tokens`);
      expect(await page.locator('.badge--expiring').count()).toBe(1);
      await capture(page, 'tokens-rotated');
      const oldRow = page.locator('tbody tr', { has: page.locator('.badge--expiring') });
      await oldRow.locator('summary').click();
      await oldRow.getByRole('button', { name: 'Revoke production server' }).click();
      await page.waitForURL(/done=revoked/);
      expect(await page.getByRole('status').first().textContent()).toMatch(/The token “production server” \(vh_live_\w{4}…\) is revoked/);
      expect((await searchWith(origin, token)).status).toBe(401);
      expect((await searchWith(origin, rotated)).status).toBe(200);
      const newRow = page.locator('tbody tr').first();
      await newRow.locator('summary').click();
      await newRow.getByRole('button', { name: 'Revoke production server' }).click();
      await page.waitForURL(/done=revoked/);
      expect((await searchWith(origin, rotated)).status).toBe(401);
      expect(await page.locator('.retired summary').textContent()).toBe('2 revoked or expired tokens');

      // Log out, and back in by keyboard alone.
      await page.getByRole('button', { name: 'Log out' }).click();
      await page.waitForURL(`${origin}/?done=logged-out`);
      expect(await page.getByRole('status').first().textContent()).toBe('You are logged out.');
      await page.goto(`${origin}/forgot-password`);
      await capture(page, 'forgot-password');
      await page.goto(`${origin}/login`);
      await capture(page, 'login');
      await page.keyboard.press('Tab'); // skip link
      await page.keyboard.press('Tab');
      await page.getByLabel('Email address').focus();
      await page.keyboard.type(email);
      await page.keyboard.press('Tab');
      await page.keyboard.type(PASSWORD);
      await page.keyboard.press('Enter');
      await page.waitForURL(/\/account$/);

      // The API reference: customer operations only, samples in four languages, and "try it"
      // answering from this host (127.0.0.1, not PUBLIC_BASE_URL's name).
      await page.goto(`${origin}/docs`);
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('vinhistory API');
      expect(await page.content()).not.toContain('/admin/');
      await capture(page, 'docs', { reopen: true });
      await page.getByLabel('Your API token, for “Try it” below').fill(token);
      const usageTry = page.locator('form[data-path="/api/v1/usage"]');
      await usageTry.getByRole('button').click();
      await expect(usageTry.locator('.try__status').textContent()).resolves.toBe('Answer: 401 Unauthorized');
      const live = await run.repos.tokens.create((await run.repos.accounts.findByEmail(email))!.id, 'docs');
      await page.getByLabel('Your API token, for “Try it” below').fill(live.token);
      await usageTry.getByRole('button').click();
      await usageTry.locator('.try__status', { hasText: '200' }).waitFor();
      expect(await usageTry.locator('.try__result code').textContent()).toContain('"plan"');
      // A path parameter goes into the path: the lot is looked up (a well-formed lot not known is 404), not refused as a malformed auction (422).
      const lookupTry = page.locator('form[data-path="/api/v1/lots/{auction}/{lot_id}"]');
      await lookupTry.getByRole('button').click();
      await lookupTry.locator('.try__status', { hasText: '404' }).waitFor();

      // Settings: delete the account; the page says what is kept.
      await page.goto(`${origin}/account/settings`);
      await page.locator('#delete summary').click();
      await capture(page, 'delete-account');
      expect(await page.locator('#delete').textContent()).toContain('We keep what the law and our accounts need');
      await page.locator('#settings-delete_password').fill(PASSWORD);
      await page.getByRole('checkbox', { name: /I understand/ }).check();
      await page.getByRole('button', { name: 'Delete my account', exact: true }).click();
      await page.waitForURL(`${origin}/?done=account-deleted`);
      expect(await page.getByRole('status').first().textContent()).toContain('We keep your invoices');
      expect((await searchWith(origin, live.token)).status).toBe(401);
      await context.close();
    } finally {
      await run.close();
    }
  }, 240_000);

  it('Stripe: the checkout goes to Stripe, and the signed webhook starts the plan', async () => {
    const stub = new StripeStub();
    await stub.start();
    const run = await startApp(STRIPE_ENV, stub);
    try {
      const context = await newContext(run.origin, [stub.origin]);
      const page = await context.newPage();
      await page.goto(`${run.origin}/pricing?billing=annual`);
      await page.getByRole('link', { name: 'Choose Professional' }).click();
      await page.waitForURL(/\/signup\?next=/);
      await page.getByLabel('Email address').fill('stripe.journey@example.com');
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('checkbox', { name: /I accept the Terms of Service/ }).check();
      await page.getByRole('button', { name: 'Create account' }).click();
      await page.waitForURL(/\/account\/billing\?plan=professional&billing=annual&done=welcome/);
      await page.getByRole('button', { name: 'Continue to payment' }).click();
      await page.waitForURL(`${stub.origin}/pay/**`);
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Stripe test checkout');

      const [session] = stub.calls('POST', '/v1/checkout/sessions');
      expect(session!.get('mode')).toBe('subscription');
      expect(session!.get('line_items[0][price_data][unit_amount]')).toBe('144000');
      expect(session!.get('line_items[0][price_data][recurring][interval]')).toBe('year');
      const accountId = session!.get('client_reference_id')!;
      expect(accountId).toMatch(/^acct_/);

      // Stripe calls the webhook; then the customer comes back to the success URL.
      const now = new Date();
      const yearLater = new Date(now);
      yearLater.setUTCFullYear(now.getUTCFullYear() + 1);
      const event = signedEvent(
        'invoice.paid',
        paidInvoice({
          subscription: 'sub_stripe_journey',
          billingReason: 'subscription_create',
          periodStart: new Date(now.getTime() - 5_000),
          periodEnd: yearLater,
          amount: 144000,
          metadata: { accountId, plan: 'professional', billing: 'annual' },
        }),
      );
      const delivered = await fetch(`${run.origin}/webhooks/stripe`, { method: 'POST', headers: event.headers, body: event.payload });
      expect(delivered.status).toBe(200);
      await page.goto(session!.get('success_url')!);
      expect(await page.getByRole('status').first().textContent()).toContain('your payment is confirmed and your plan is active');
      expect(await page.locator('.current-plan .stat').textContent()).toBe('Professional');
      expect(await page.locator('.current-plan .status').textContent()).toMatch(/^Renews automatically on /);
      expect(await page.locator('.badge--paid').count()).toBe(1);
      await capture(page, 'billing-stripe');
      await context.close();
    } finally {
      await run.close();
      await stub.stop();
    }
  }, 60_000);

  it('an established account: the dashboard and the usage chart show the period day by day', async () => {
    const run = await startApp();
    try {
      const email = 'fleet@example.com';
      const account = await run.repos.accounts.create(email);
      await run.repos.passwords.set(account.id, await new PasswordHasher(TEST_SCRYPT).hash(PASSWORD));
      const now = new Date();
      const startedAt = new Date(now.getTime() - 19 * DAY_MS - 3 * 60 * 60 * 1000);
      const paidThrough = new Date(startedAt.getTime() + 365 * DAY_MS);
      const subscription = await run.repos.subscriptions.create({ accountId: account.id, planCode: 'professional', billing: 'annual', startedAt, endsAt: paidThrough });
      await run.repos.billing.create({ subscriptionId: subscription.id, provider: 'manual', paidThrough });
      const lot = makeLot({ vin: VIN, auction: 'copart', lot_id: 31000001, sale_date: '2024-03-14T18:00:00.000Z', name: '2010 MERCEDES-BENZ GL 450 4MATIC' });
      await run.repos.lots.upsertBatch([lot]);
      const tokens = [await run.repos.tokens.create(account.id, 'dealer portal'), await run.repos.tokens.create(account.id, 'valuation bot')];
      await run.repos.tokens.touch(tokens[0]!.row.id, now);
      // A working week and quieter weekends: deterministic counts, checked against the bars below.
      const expected = new Map<string, number>();
      const period = startedAt.toISOString();
      for (let day = 0; day <= 19; day++) {
        const at = new Date(startedAt.getTime() + day * DAY_MS + 60 * 60 * 1000);
        if (at > now) break;
        const weekend = [0, 6].includes(at.getUTCDay());
        const count = weekend ? 3 + (day % 4) : 18 + ((day * 7) % 23);
        for (let i = 0; i < count; i++) {
          const searchedAt = new Date(at.getTime() + i * 60_000);
          // A day's searches run a minute apart from an hour after the period's start time of day: late
          // in a UTC day they go on past midnight, and the chart counts each in its own day.
          const date = searchedAt.toISOString().slice(0, 10);
          expected.set(date, (expected.get(date) ?? 0) + 1);
          const result = await run.repos.searchCommit.commit({
            principal: await principalAt(run.repos, tokens[i % 2]!.row.id, searchedAt),
            accountId: account.id,
            tokenId: tokens[i % 2]!.row.id,
            vin: i % 5 === 0 ? '1HGCM82633A004352' : VIN,
            now: searchedAt,
            periodStart: period,
            quota: 5000,
            lots: i % 5 === 0 ? [] : [lotJson(lot)],
            idempotencyKey: null,
          });
          expect(result.kind).toBe('committed');
        }
      }
      const total = [...expected.values()].reduce((sum, n) => sum + n, 0);

      const context = await newContext(run.origin);
      const page = await context.newPage();
      await page.goto(`${run.origin}/login`);
      await page.getByLabel('Email address').fill(email);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Log in' }).click();
      await page.waitForURL(/\/account$/);
      expect(await page.locator('.meter__used').textContent()).toBe(total.toLocaleString('en-US'));
      expect(await page.locator('#tokens-title + .stat').textContent()).toBe('2');
      await capture(page, 'dashboard');

      await page.getByRole('link', { name: 'Usage and past searches' }).click();
      await page.waitForURL(/\/account\/usage$/);
      const bars = await page.locator('.chart__bar').evaluateAll((rects) => rects.map((rect) => rect.querySelector('title')!.textContent));
      expect(bars.length).toBeGreaterThanOrEqual(28);
      for (const [day, count] of expected) {
        const label = new Intl.DateTimeFormat('en-US', { timeZone: 'UTC', month: 'short', day: 'numeric' }).format(new Date(`${day}T12:00:00Z`));
        expect(bars).toContain(`${label}: ${count} searches`);
      }
      expect(await page.locator('#searches tbody tr').count()).toBe(25);
      await capture(page, 'usage', { reopen: true });
      // Older searches, page by page, and back.
      await page.getByRole('link', { name: 'Older searches →' }).click();
      await page.waitForURL(/before=/);
      expect(await page.getByRole('heading', { name: 'Older searches' }).count()).toBe(1);
      expect(await page.locator('#searches tbody tr').count()).toBe(25);
      await page.getByRole('link', { name: 'Settings' }).click();
      await page.waitForURL(/\/account\/settings$/);
      expect(await page.getByRole('heading', { name: 'Change your password' }).count()).toBe(1);
      await capture(page, 'settings');
      await context.close();

      // Without JavaScript: log in, create a token, read it; the copy button (a script's job) stays hidden.
      const plain = await browser.newContext({ javaScriptEnabled: false, viewport: PHONE });
      await plain.route((url) => url.origin !== run.origin, (route) => route.abort());
      const noScript = await plain.newPage();
      await noScript.goto(`${run.origin}/login?next=/account/tokens`);
      await noScript.getByLabel('Email address').fill(email);
      await noScript.getByLabel('Password').fill(PASSWORD);
      await noScript.getByRole('button', { name: 'Log in' }).click();
      await noScript.waitForURL(/\/account\/tokens$/);
      await noScript.getByLabel('Name').fill('no script');
      await noScript.getByRole('button', { name: 'Create token' }).click();
      expect(await noScript.locator('#new-token').textContent()).toMatch(/^vh_live_[0-9A-Za-z]{32}$/);
      expect(await noScript.locator('.copy-button').isVisible()).toBe(false);
      await plain.close();
    } finally {
      await run.close();
    }
  }, 60_000);

  it('loads every page under the content security policy without a violation, script error or console error', () => {
    expect(cspViolations).toEqual([]);
    expect(pageErrors).toEqual([]);
    expect(consoleErrors).toEqual([]);
  });
});
