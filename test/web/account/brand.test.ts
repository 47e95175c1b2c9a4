import { execFileSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DIALECTS } from '../../support/databases.ts';
import { createAccountTestApp, randomEmail, WebClient, type AccountTestApp } from '../../support/customer-app.ts';
import { IN_CI } from '../../support/env.ts';

const CAN_PRINT = existsSync('/usr/bin/chromium') || IN_CI;

/** The sandbox vehicle with several lots: a test token's search of it makes a report. */
const SANDBOX_VIN = '4T1BF1FK7FU900011';
const OUR_TRACES = /vinhistory|VH<\/span>|get reports like this/i;

interface Upload {
  bytes: Buffer;
  type: string;
  filename: string;
}

/** Sends the brand form as a browser does: multipart, with the CSRF token of the last page. */
async function postBrand(t: AccountTestApp, browser: WebClient, fields: Record<string, string>, logo?: Upload, csrf: string | null = browser.csrf) {
  const form = new FormData();
  if (csrf !== null) form.append('_csrf', csrf);
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  form.append('logo', logo ? new Blob([new Uint8Array(logo.bytes)], { type: logo.type }) : new Blob([], { type: 'application/octet-stream' }), logo?.filename ?? '');
  const request = new Request('http://localhost/', { method: 'POST', body: form });
  const payload = Buffer.from(await request.arrayBuffer());
  return t.app.inject({
    method: 'POST',
    url: '/account/brand',
    headers: { cookie: browser.cookieHeader(), 'content-type': request.headers.get('content-type')! },
    payload,
  });
}

const pngLogo = async (width = 96, height = 32): Promise<Upload> => ({
  bytes: await sharp({ create: { width, height, channels: 4, background: '#0b5394' } }).png().toBuffer(),
  type: 'image/png',
  filename: 'logo.png',
});

describe.each(DIALECTS)('white label: the brand page, branded reports and report_url (%s)', (dialect) => {
  let t: AccountTestApp;
  let tracker: Server;
  let trackerHits: string[] = [];
  let trackerBase: string;

  beforeAll(async () => {
    tracker = createServer((request, response) => {
      trackerHits.push(request.url ?? '');
      response.writeHead(200, { 'content-type': 'image/png' }).end();
    });
    await new Promise<void>((resolve) => tracker.listen(0, '127.0.0.1', resolve));
    trackerBase = `http://127.0.0.1:${(tracker.address() as AddressInfo).port}`;
    t = await createAccountTestApp(dialect);
  });
  afterAll(async () => {
    await t?.close();
    await new Promise((resolve) => tracker?.close(resolve));
  });

  async function signedUp() {
    const browser = new WebClient(t.app);
    const email = randomEmail();
    await browser.signUp(email);
    const account = (await t.repos.accounts.findByEmail(email))!;
    await browser.get('/account/brand');
    return { browser, account };
  }

  async function testToken(accountId: string, name = 'site') {
    const { row, token } = await t.repos.tokens.create(accountId, name, new Date(), 'test');
    return { tokenId: row.id, token };
  }

  async function search(token: string) {
    let res = await t.app.inject({ url: `/api/v1/search?vin=${SANDBOX_VIN}`, headers: { authorization: token } });
    // The sandbox's rate is 2 a second per account: a quick test waits its turn.
    for (let tries = 0; res.statusCode === 429 && tries < 10; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 300));
      res = await t.app.inject({ url: `/api/v1/search?vin=${SANDBOX_VIN}`, headers: { authorization: token } });
    }
    expect(res.statusCode).toBe(200);
    return res.json().report_url as string;
  }

  test('the account navigation links the brand page; it links the report language of Settings', async () => {
    const { browser } = await signedUp();
    const page = await browser.get('/account/brand');
    expect(page.statusCode).toBe(200);
    expect(page.body).toMatch(/<a href="\/account\/brand" aria-current="page">Brand<\/a>/);
    expect(page.body).toContain('href="/account/settings">change the report language in Settings');
    expect(page.body).toContain('enctype="multipart/form-data"');
    expect((await browser.get('/account/settings')).body).toContain('href="/account/brand"');
  });

  test('a malicious SVG is stored as a PNG drawn from it: no script, handler or foreignObject survives, nothing external is fetched', async () => {
    const { browser, account } = await signedUp();
    trackerHits = [];
    const svg = `<?xml version="1.0"?>
<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="120" height="40" onload="alert(document.cookie)">
  <script>fetch('${trackerBase}/script')</script>
  <style>@import url(${trackerBase}/style.css); rect { fill: url(${trackerBase}/fill.svg#p) }</style>
  <rect width="120" height="40" fill="#0b5394" onclick="alert(1)"/>
  <image href="${trackerBase}/image.png" width="10" height="10"/>
  <image xlink:href="${trackerBase}/xlink.png" width="10" height="10"/>
  <use href="${trackerBase}/sprite.svg#a"/>
  <foreignObject width="120" height="40"><div xmlns="http://www.w3.org/1999/xhtml"><iframe src="${trackerBase}/frame"></iframe>hi</div></foreignObject>
</svg>`;
    const saved = await postBrand(t, browser, { brand_id: '', name: 'Auto Check PL', accent: '#0B5394', contact: 'help@autocheck.example', report_base_url: 'https://reports.autocheck.example/' }, {
      bytes: Buffer.from(svg),
      type: 'image/svg+xml',
      filename: 'logo.svg',
    });
    expect(saved.statusCode).toBe(303);
    const [brand] = await t.app.services.brands.list(account.id);
    expect(brand).toMatchObject({ isDefault: true, name: 'Auto Check PL', accent: '#0b5394', contact: 'help@autocheck.example', reportBaseUrl: 'https://reports.autocheck.example' });
    expect(brand!.logoHash).toMatch(/^[0-9a-f]{64}$/);

    const logo = await t.app.inject({ url: `/report/brand/${brand!.logoHash}.png` });
    expect(logo.statusCode).toBe(200);
    expect(logo.headers['content-type']).toBe('image/png');
    expect(logo.headers['x-content-type-options']).toBe('nosniff');
    expect(logo.rawPayload.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    const text = logo.rawPayload.toString('latin1');
    for (const trace of ['<svg', 'script', 'onload', 'onclick', 'foreignObject', '127.0.0.1', 'alert']) expect(text).not.toContain(trace);
    const meta = await sharp(logo.rawPayload).metadata();
    expect(meta).toMatchObject({ format: 'png', width: 480, height: 160 });
    expect(trackerHits).toEqual([]);

    const page = await browser.get(`/account/brand?brand=${brand!.id}&done=saved`);
    expect(page.body).toContain('Your brand is saved');
    expect(page.body).toContain(`src="/report/brand/${brand!.logoHash}.png"`);
    expect(page.body).toContain(`src="/account/brand/preview?brand=${brand!.id}"`);
  });

  test('refuses, field by field: a file too large, not PNG or SVG, too small in pixels; a light accent; a bad address; no name', async () => {
    const { browser, account } = await signedUp();
    const big = { bytes: Buffer.concat([(await pngLogo()).bytes, Buffer.alloc(300 * 1024)]), type: 'image/png', filename: 'big.png' };
    const tooLarge = await postBrand(t, browser, { brand_id: '', name: 'Big' }, big);
    expect(tooLarge.statusCode).toBe(422);
    expect(tooLarge.body).toContain('it may be at most 256 KiB');
    expect(tooLarge.body).toMatch(/id="brand-logo"[^>]*aria-invalid="true"/);

    const html = await postBrand(t, browser, { brand_id: '', name: 'Html' }, { bytes: Buffer.from('<html><script>alert(1)</script></html>'), type: 'image/svg+xml', filename: 'x.svg' });
    expect(html.statusCode).toBe(422);
    expect(html.body).toContain('The logo must be a PNG or an SVG file.');

    const tiny = await postBrand(t, browser, { brand_id: '', name: 'Tiny' }, await pngLogo(8, 8));
    expect(tiny.statusCode).toBe(422);
    expect(tiny.body).toContain('The logo is 8×8 pixels; each side must be from 16 to 4096 pixels.');

    const light = await postBrand(t, browser, { brand_id: '', name: 'Light', accent: '#ffd700' });
    expect(light.statusCode).toBe(422);
    expect(light.body).toMatch(/White text on #ffd700 has a contrast of 1\.\d\d:1; it needs at least 4\.5:1/);
    // The form keeps what was typed.
    expect(light.body).toContain('value="Light"');

    const badColour = await postBrand(t, browser, { brand_id: '', name: 'X', accent: 'red' });
    expect(badColour.body).toContain('Give the accent colour as #rrggbb');

    for (const address of ['ftp://reports.example.com', 'https://user:pw@reports.example.com', 'https://reports.example.com/?a=1', 'reports.example.com']) {
      const refused = await postBrand(t, browser, { brand_id: '', name: 'Addr', report_base_url: address });
      expect(refused.statusCode, address).toBe(422);
      expect(refused.body).toMatch(/id="brand-report_base_url"[^>]*aria-invalid="true"/);
    }
    const nameless = await postBrand(t, browser, { brand_id: '', name: '   ' });
    expect(nameless.statusCode).toBe(422);
    expect(nameless.body).toContain('Give the name your readers know you by');

    // Above the parser's own limit the request is refused before it is read.
    const huge = await postBrand(t, browser, { brand_id: '', name: 'Huge' }, { bytes: Buffer.alloc(1024 * 1024 + 10), type: 'image/png', filename: 'huge.png' });
    expect(huge.statusCode).toBe(413);
    // Without the CSRF token nothing is saved.
    await browser.get('/account/brand');
    expect((await postBrand(t, browser, { brand_id: '', name: 'No token' }, undefined, null)).statusCode).toBe(403);
    expect(await t.app.services.brands.list(account.id)).toEqual([]);
  });

  test('a branded report: their name, logo, colour and contact, nothing of ours in the page; report_url on their address', async () => {
    const { browser, account } = await signedUp();
    expect((await postBrand(t, browser, { brand_id: '', name: 'Auto Check PL', accent: '#7a1f5c', contact: 'Questions? help@autocheck.example', report_base_url: 'https://autocheck.example/vin' }, await pngLogo())).statusCode).toBe(303);
    const [brand] = await t.app.services.brands.list(account.id);
    const { token } = await testToken(account.id);
    const reportUrl = await search(token);
    expect(reportUrl).toMatch(/^https:\/\/autocheck\.example\/vin\/report\/[0-9a-f-]{36}$/);
    const id = reportUrl.slice(reportUrl.lastIndexOf('/') + 1);

    const page = await t.app.inject({ url: `/report/${id}` });
    expect(page.statusCode).toBe(200);
    expect(page.body).not.toMatch(OUR_TRACES);
    expect(page.body).not.toContain('vinhistory.test');
    expect(page.body).toContain('<title>');
    expect(page.body).toMatch(/<title>[^<]* · Auto Check PL<\/title>/);
    expect(page.body).toContain(`<img class="report-brand__logo" src="./brand/${brand!.logoHash}.png" alt="Auto Check PL"`);
    expect(page.body).toContain('Questions? help@autocheck.example');
    expect(page.body).toContain(`data-share-url="https://autocheck.example/vin/report/${id}?lang=en"`);
    expect(page.body).toContain(`href="./${id}.pdf?lang=en"`);
    // Every asset is linked under /report/ (what the reseller's proxy forwards) and is served there.
    const links = [...page.body.matchAll(/(?:href|src)="(\.\/assets\/[^"]+)"/g)].map((m) => m[1]!);
    expect(links).toHaveLength(3);
    expect(page.body).not.toMatch(/(?:href|src)="\/assets\//);
    for (const link of links) expect((await t.app.inject({ url: new URL(link, `http://x/report/${id}`).pathname })).statusCode, link).toBe(200);
    const fontsCss = await t.app.inject({ url: '/report/assets/report-fonts.css' });
    const font = /url\(([^)]+\.woff2)\)/.exec(fontsCss.body)![1]!;
    expect(font.startsWith('fonts/')).toBe(true);
    expect((await t.app.inject({ url: `/report/assets/${font}` })).statusCode).toBe(200);
    // The accent's inline style is allowed by its hash, light and dark.
    expect(page.body).toContain('--accent:#7a1f5c');
    expect(page.headers['content-security-policy']).toMatch(/style-src 'self' 'sha256-/);

    // A change of brand shows at once on the next view (as the brand is now, not as it was).
    expect((await postBrand(t, browser, { brand_id: brand!.id, name: 'AutoCheck Polska', accent: '', contact: '', report_base_url: '' })).statusCode).toBe(303);
    const after = await t.app.inject({ url: `/report/${id}` });
    expect(after.body).toContain('AutoCheck Polska');
    // Without a report address of theirs the link is necessarily ours; nothing else of ours shows.
    expect(after.body).toContain(`data-share-url="https://vinhistory.test/report/${id}?lang=en"`);
    expect(after.body.replace(`https://vinhistory.test/report/${id}`, '')).not.toMatch(OUR_TRACES);
    // The logo stays when no new file is sent; without a base URL, links use ours.
    expect(after.body).toContain(`./brand/${brand!.logoHash}.png`);
    expect(await search(token)).toMatch(/^https:\/\/vinhistory\.test\/report\//);

    // Removing the brand gives the report our brand back.
    await browser.get(`/account/brand?brand=${brand!.id}`);
    expect((await browser.post('/account/brand/delete', { brand_id: brand!.id })).statusCode).toBe(303);
    expect((await t.app.inject({ url: `/report/${id}` })).body).toContain('vinhistory');
  });

  test('per token: a named brand chosen on the tokens page; other tokens keep the default', async () => {
    const { browser, account } = await signedUp();
    expect((await postBrand(t, browser, { brand_id: '', name: 'Main Brand', report_base_url: 'https://main.example' })).statusCode).toBe(303);
    await browser.get('/account/brand?brand=new');
    expect((await postBrand(t, browser, { brand_id: 'new', name: 'Site B', accent: '#114411', report_base_url: 'https://b.example' })).statusCode).toBe(303);
    const brands = await t.app.services.brands.list(account.id);
    expect(brands.map((brand) => [brand.name, brand.isDefault])).toEqual([
      ['Main Brand', true],
      ['Site B', false],
    ]);
    const siteB = brands[1]!;
    const a = await testToken(account.id, 'site A');
    const b = await testToken(account.id, 'site B');
    const before = await search(b.token);

    const tokens = await browser.get('/account/tokens');
    expect(tokens.body).toContain(`<option value="${siteB.id}">Site B</option>`);
    expect((await browser.post(`/account/tokens/${b.tokenId}/brand`, { brand_id: siteB.id })).statusCode).toBe(303);
    expect((await browser.get('/account/tokens')).body).toContain(`<option value="${siteB.id}" selected>Site B</option>`);

    const urlA = await search(a.token);
    const urlB = await search(b.token);
    expect(urlA).toMatch(/^https:\/\/main\.example\/report\//);
    expect(urlB).toMatch(/^https:\/\/b\.example\/report\//);
    const pageB = await t.app.inject({ url: new URL(urlB).pathname });
    expect(pageB.body).toContain('Site B');
    expect(pageB.body).not.toContain('Main Brand');
    expect(pageB.body).toContain('--accent:#114411');
    expect((await t.app.inject({ url: new URL(urlA).pathname })).body).toContain('Main Brand');
    // A report made by the token before it had its brand shows the token's brand now.
    expect((await t.app.inject({ url: new URL(before).pathname })).body).toContain('Site B');

    // Someone else's brand or token cannot be chosen.
    const other = await signedUp();
    await other.browser.get('/account/tokens');
    expect((await other.browser.post(`/account/tokens/${b.tokenId}/brand`, { brand_id: '' })).statusCode).toBe(404);
    const otherToken = await testToken(other.account.id);
    expect((await other.browser.post(`/account/tokens/${otherToken.tokenId}/brand`, { brand_id: siteB.id })).statusCode).toBe(404);
    expect((await other.browser.get(`/account/brand?brand=${siteB.id}`)).statusCode).toBe(404);
    expect((await other.browser.get(`/account/brand/preview?brand=${siteB.id}`)).statusCode).toBe(404);

    // Back to the default: the select's empty choice.
    expect((await browser.post(`/account/tokens/${b.tokenId}/brand`, { brand_id: '' })).statusCode).toBe(303);
    expect(await search(b.token)).toMatch(/^https:\/\/main\.example\/report\//);
  });

  test.runIf(CAN_PRINT)('the PDF of a branded report carries their name and contact, none of ours; a changed brand prints anew', async () => {
    const { browser, account } = await signedUp();
    await postBrand(t, browser, { brand_id: '', name: 'Print Motors', contact: 'print@motors.example', report_base_url: 'https://print.example' }, await pngLogo());
    const { token } = await testToken(account.id);
    const id = (await search(token)).split('/').pop()!;
    const redirect = await t.app.inject({ url: `/report/${id}.pdf`, headers: { 'accept-language': 'pl' } });
    expect(redirect.statusCode).toBe(302);
    // Relative, so that it stays on their address behind their proxy.
    expect(redirect.headers.location).toBe(`./${id}.pdf?lang=pl&paper=a4`);
    const text = async () => {
      const res = await t.app.inject({ url: `/report/${id}.pdf?lang=en&paper=a4` });
      expect(res.statusCode).toBe(200);
      const file = path.join(t.dataDir, `${Math.random().toString(36).slice(2)}.pdf`);
      writeFileSync(file, res.rawPayload);
      return execFileSync('pdftotext', [file, '-'], { encoding: 'utf8' }) + execFileSync('pdfinfo', [file], { encoding: 'utf8' });
    };
    const first = await text();
    expect(first).toContain('Print Motors');
    expect(first).toContain('print@motors.example');
    expect(first).not.toMatch(/vinhistory/i);
    const [brand] = await t.app.services.brands.list(account.id);
    await browser.get(`/account/brand?brand=${brand!.id}`);
    expect((await postBrand(t, browser, { brand_id: brand!.id, name: 'Reprint Motors', contact: '', report_base_url: 'https://print.example' })).statusCode).toBe(303);
    const second = await text();
    expect(second).toContain('Reprint Motors');
    expect(second).not.toContain('print@motors.example');
  });

  test('the preview renders the report page with the brand over a sample report, framable by the brand page only', async () => {
    const { browser, account } = await signedUp();
    await postBrand(t, browser, { brand_id: '', name: 'Preview Motors', accent: '#0b5394', contact: 'Call 555-0100', report_base_url: 'https://preview.example' }, await pngLogo());
    const [brand] = await t.app.services.brands.list(account.id);
    const preview = await browser.get(`/account/brand/preview?brand=${brand!.id}`);
    expect(preview.statusCode).toBe(200);
    expect(preview.body).toContain('Preview Motors');
    expect(preview.body).toContain('Call 555-0100');
    expect(preview.body).not.toMatch(OUR_TRACES);
    expect(preview.headers['content-security-policy']).toContain("frame-ancestors 'self'");
    expect(preview.headers['x-frame-options']).toBe('SAMEORIGIN');
    expect(preview.body).toContain('href="/report/assets/app.css?v=');
    // Logged out, the preview is not shown.
    expect((await new WebClient(t.app).get(`/account/brand/preview?brand=${brand!.id}`)).statusCode).toBe(303);
  });
});
