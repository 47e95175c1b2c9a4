import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { BrandService } from '../../src/accounts/brand-service.ts';
import { prepareLogo } from '../../src/accounts/brand-logo.ts';
import { accentProblem, contrastWithWhite } from '../../src/domain/brand.ts';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../support/databases.ts';

describe('accent colours', () => {
  test('contrast with white follows WCAG: black 21:1, white 1:1, #767676 about 4.54:1', () => {
    expect(contrastWithWhite('#000000')).toBeCloseTo(21, 5);
    expect(contrastWithWhite('#ffffff')).toBeCloseTo(1, 5);
    expect(contrastWithWhite('#767676')).toBeCloseTo(4.54, 2);
  });

  test('a colour too light for white text is refused with its ratio; a dark one passes', () => {
    expect(accentProblem('#777777')).toMatch(/contrast of 4\.48:1; it needs at least 4\.5:1/);
    expect(accentProblem('#767676')).toBeNull();
    expect(accentProblem('#0b5394')).toBeNull();
    expect(accentProblem('#0B5394')).toBeNull();
    expect(accentProblem('#fff')).toMatch(/#rrggbb/);
    expect(accentProblem('url(x)')).toMatch(/#rrggbb/);
  });
});

describe('logos', () => {
  test('an SVG is drawn to a PNG filling 640×160 at most, keeping its proportions', async () => {
    const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="200" height="100"><rect width="200" height="100" fill="#123456"/></svg>');
    const logo = await prepareLogo(svg);
    expect(logo.kind).toBe('ok');
    if (logo.kind !== 'ok') return;
    expect(await sharp(logo.png).metadata()).toMatchObject({ format: 'png', width: 320, height: 160 });
    expect(logo.hash).toMatch(/^[0-9a-f]{64}$/);
  });

  test('a PNG is encoded anew without what was appended to it, never enlarged', async () => {
    const png = await sharp({ create: { width: 40, height: 20, channels: 3, background: '#123456' } }).png().toBuffer();
    const logo = await prepareLogo(Buffer.concat([png, Buffer.from('<script>alert(1)</script>')]));
    expect(logo.kind).toBe('ok');
    if (logo.kind !== 'ok') return;
    expect(logo.png.toString('latin1')).not.toContain('script');
    expect(await sharp(logo.png).metadata()).toMatchObject({ width: 40, height: 20 });
  });

  test('refuses what is not a PNG or an SVG, a broken file, and sizes out of bounds', async () => {
    const jpeg = await sharp({ create: { width: 40, height: 20, channels: 3, background: '#123456' } }).jpeg().toBuffer();
    expect(await prepareLogo(jpeg)).toEqual({ kind: 'invalid', message: 'The logo must be a PNG or an SVG file.' });
    expect(await prepareLogo(Buffer.alloc(0))).toEqual({ kind: 'invalid', message: 'The logo file is empty.' });
    const broken = await prepareLogo(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="100" height="40"><rect'));
    expect(broken.kind).toBe('invalid');
    const huge = await prepareLogo(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="100000" height="100000"><rect width="10" height="10"/></svg>'));
    expect(huge).toEqual({ kind: 'invalid', message: 'The logo is 100000×100000 pixels; each side must be from 16 to 4096 pixels.' });
    const tooBig = await prepareLogo(Buffer.concat([Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="100" height="40">'), Buffer.alloc(257 * 1024, 32), Buffer.from('</svg>')]));
    expect(tooBig).toMatchObject({ kind: 'invalid', message: expect.stringContaining('at most 256 KiB') });
  });
});

describe('the logo sniff (issue 28, F1)', () => {
  test('comments before the <svg> are skipped in linear time: 40 empty comments then "x" is refused at once, the event loop free', async () => {
    // The old sniff, a backtracking regex, doubled its time with each comment: 24 held the loop 1.6 s, 40 for hours.
    const started = performance.now();
    const outcome = await prepareLogo(Buffer.from(`${'<!---->'.repeat(40)}x`));
    expect(outcome).toEqual({ kind: 'invalid', message: 'The logo must be a PNG or an SVG file.' });
    expect(performance.now() - started).toBeLessThan(1_000);
    // 4096 bytes of comments, the most the sniff reads, also answer at once.
    expect(await prepareLogo(Buffer.from(`${'<!---->'.repeat(600)}x`))).toMatchObject({ kind: 'invalid' });
  });

  test('an SVG after a BOM, an XML declaration, comments and a doctype is still recognised; a comment that never ends is not', async () => {
    const svg = '<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20"><rect width="40" height="20"/></svg>';
    for (const head of ['', '\uFEFF', '<?xml version="1.0"?>\n', '<!-- a - b -->\n<!---->', '<?xml version="1.0"?><!DOCTYPE svg>\n<!-- c -->']) {
      expect((await prepareLogo(Buffer.from(`${head}${svg}`))).kind, JSON.stringify(head)).toBe('ok');
    }
    for (const head of ['<!-- never ends ', '<!DOCTYPE svg', 'x', '<?xml version="1.0"?>x']) {
      expect(await prepareLogo(Buffer.from(`${head}${svg}`)), JSON.stringify(head)).toEqual({ kind: 'invalid', message: 'The logo must be a PNG or an SVG file.' });
    }
  });
});

describe.each(DIALECTS)('brand service (%s)', (dialect) => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase(dialect);
  });
  afterAll(async () => {
    await database?.destroy();
  });

  test('in production the report address must be https://; outside it http:// is accepted', async () => {
    const account = await database.repos.accounts.create(`brand-${Math.random().toString(36).slice(2)}@example.com`);
    const production = new BrandService({ repos: database.repos, isProduction: true });
    const refused = await production.save(account.id, null, { name: 'A', accent: '', contact: '', reportBaseUrl: 'http://reports.example.com' });
    expect(refused).toMatchObject({ kind: 'invalid', errors: { report_base_url: expect.stringContaining('https://') } });
    const development = new BrandService({ repos: database.repos, isProduction: false });
    const saved = await development.save(account.id, null, { name: '  A   brand ', accent: '', contact: '', reportBaseUrl: 'http://localhost:8080/vin/' });
    expect(saved).toMatchObject({ kind: 'saved', brand: { name: 'A brand', reportBaseUrl: 'http://localhost:8080/vin', isDefault: true } });
  });

  test('a token carries a named brand; its reports show it, the others the default; a removed brand falls back', async () => {
    const service = new BrandService({ repos: database.repos, isProduction: false, cacheMs: 60_000 });
    const account = await database.repos.accounts.create(`brand-${Math.random().toString(36).slice(2)}@example.com`);
    const main = await service.save(account.id, null, { name: 'Main', accent: '', contact: '', reportBaseUrl: '' });
    const named = await service.save(account.id, 'new', { name: 'Site', accent: '', contact: '', reportBaseUrl: '' });
    if (main.kind !== 'saved' || named.kind !== 'saved') throw new Error('not saved');
    const { row: token } = await database.repos.tokens.create(account.id, 'site');
    expect((await service.forReport({ accountId: account.id, tokenId: token.id }))?.name).toBe('Main');
    expect(await service.setTokenBrand(account.id, token.id, named.brand.id)).toBe(true);
    expect((await service.forReport({ accountId: account.id, tokenId: token.id }))?.name).toBe('Site');
    expect((await service.forReport({ accountId: account.id, tokenId: null }))?.name).toBe('Main');
    // Saving the default again edits it: still one default.
    await service.save(account.id, null, { name: 'Main 2', accent: '', contact: '', reportBaseUrl: '' });
    expect((await service.list(account.id)).map((brand) => [brand.name, brand.isDefault])).toEqual([
      ['Main 2', true],
      ['Site', false],
    ]);
    expect(await service.remove(account.id, named.brand.id)).toBe(true);
    expect((await service.forReport({ accountId: account.id, tokenId: token.id }))?.name).toBe('Main 2');
    expect((await database.repos.brands.tokenBrands(account.id)).size).toBe(0);
    expect(await service.remove(account.id, main.brand.id)).toBe(true);
    expect(await service.forReport({ accountId: account.id, tokenId: token.id })).toBeNull();
  });
});
