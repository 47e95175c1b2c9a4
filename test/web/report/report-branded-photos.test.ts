import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { BRAND_LIMITS } from '../../../src/domain/brand.ts';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DirectoryStore } from '../../../src/media/stores/directory-store.ts';
import { createTestApp, TEST_BASE_URL, testConfig, type TestApp } from '../../support/app.ts';
import { createCustomer, makeLot, validVin } from '../../support/fixtures.ts';

/**
 * Issue 28, Also: a branded report's archived photos came from `/media/` on our domain, though the
 * reseller proxies only `/report/*` and its page must not show our address. They are served under
 * `/report/media/` too and linked relatively, as the branded page's stylesheet and fonts are.
 */
describe('archived photos of a branded report page', () => {
  let t: TestApp;
  let dir: string;
  const bytes = randomBytes(2_000);
  const hash = createHash('sha256').update(bytes).digest('hex');

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'vinhistory-branded-media-'));
    await new DirectoryStore(dir).put(`${hash}.jpg`, bytes);
    await new DirectoryStore(dir).put(`${hash}-thumb.webp`, bytes.subarray(0, 100));
    t = await createTestApp('sqlite', { config: testConfig({ NODE_ENV: 'production', MEDIA_ARCHIVE: 'directory', MEDIA_DIR: dir }) });
  });
  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A report whose snapshot lists an archived copy (a search made after the archive copied the photo). */
  async function reportPage(branded: boolean): Promise<string> {
    const customer = await createCustomer(t.repos);
    if (branded) {
      await t.repos.brands.create(customer.accountId, true, { name: 'Resale Motors', accent: null, contact: null, reportBaseUrl: 'https://reports.resale.example' }, new Date(), BRAND_LIMITS.namedBrands);
    }
    const vin = validVin('1FTFW1ET5DFC7777');
    await t.repos.lots.upsertBatch([makeLot({ vin, auction: 'copart', lot_id: 41000001, images: [`${TEST_BASE_URL}/media/${hash}.jpg`] })]);
    const search = await t.app.inject({ method: 'POST', url: '/api/v1/search', headers: { authorization: customer.token }, payload: { vin } });
    expect(search.statusCode).toBe(200);
    const page = await t.app.inject({ url: new URL(search.json().report_url as string).pathname });
    expect(page.statusCode).toBe(200);
    return page.body;
  }

  it('links them under the report path, relatively, so that they come through the reseller’s proxy', async () => {
    const body = await reportPage(true);
    expect(body).not.toContain(`${TEST_BASE_URL}/media/`);
    expect(body).toContain(`./media/${hash}-thumb.webp`);
    expect(body).toContain(`./media/${hash}.jpg`);
  });

  it('serves them at /report/media/ as at /media/', async () => {
    const photo = await t.app.inject({ url: `/report/media/${hash}.jpg` });
    expect(photo.statusCode).toBe(200);
    expect(photo.rawPayload.equals(bytes)).toBe(true);
    expect(photo.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect((await t.app.inject({ url: `/report/media/${'0'.repeat(64)}.jpg` })).statusCode).toBe(404);
  });

  it('leaves our own report pages on the archive’s absolute URLs', async () => {
    const body = await reportPage(false);
    expect(body).toContain(`${TEST_BASE_URL}/media/${hash}-thumb.webp`);
  });
});
