import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { BrandService } from '../../src/accounts/brand-service.ts';
import { prepareLogo, SVG_LOGO_LIMITS } from '../../src/accounts/brand-logo.ts';
import { LogoProcess } from '../../src/media/logo-process.ts';
import { accentProblem, contrastWithWhite } from '../../src/domain/brand.ts';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../support/databases.ts';

const logos = new LogoProcess();
afterAll(() => logos.close());

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
    const logo = await prepareLogo(svg, logos);
    expect(logo.kind).toBe('ok');
    if (logo.kind !== 'ok') return;
    expect(await sharp(logo.png).metadata()).toMatchObject({ format: 'png', width: 320, height: 160 });
    expect(logo.hash).toMatch(/^[0-9a-f]{64}$/);
  });

  test('a PNG is encoded anew without what was appended to it, never enlarged', async () => {
    const png = await sharp({ create: { width: 40, height: 20, channels: 3, background: '#123456' } }).png().toBuffer();
    const logo = await prepareLogo(Buffer.concat([png, Buffer.from('<script>alert(1)</script>')]), logos);
    expect(logo.kind).toBe('ok');
    if (logo.kind !== 'ok') return;
    expect(logo.png.toString('latin1')).not.toContain('script');
    expect(await sharp(logo.png).metadata()).toMatchObject({ width: 40, height: 20 });
  });

  test('refuses what is not a PNG or an SVG, a broken file, and sizes out of bounds', async () => {
    const jpeg = await sharp({ create: { width: 40, height: 20, channels: 3, background: '#123456' } }).jpeg().toBuffer();
    expect(await prepareLogo(jpeg, logos)).toEqual({ kind: 'invalid', message: 'The logo must be a PNG or an SVG file.' });
    expect(await prepareLogo(Buffer.alloc(0), logos)).toEqual({ kind: 'invalid', message: 'The logo file is empty.' });
    const broken = await prepareLogo(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="100" height="40"><rect'), logos);
    expect(broken.kind).toBe('invalid');
    const huge = await prepareLogo(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="100000" height="100000"><rect width="10" height="10"/></svg>'), logos);
    expect(huge).toEqual({ kind: 'invalid', message: 'The logo is 100000×100000 pixels; each side must be from 16 to 4096 pixels.' });
    const tooBig = await prepareLogo(Buffer.concat([Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="100" height="40">'), Buffer.alloc(257 * 1024, 32), Buffer.from('</svg>')]), logos);
    expect(tooBig).toMatchObject({ kind: 'invalid', message: expect.stringContaining('at most 256 KiB') });
  });
});

describe('the logo sniff (issue 28, F1)', () => {
  test('comments before the <svg> are skipped in linear time: 40 empty comments then "x" is refused at once, the event loop free', async () => {
    // The old sniff, a backtracking regex, doubled its time with each comment: 24 held the loop 1.6 s, 40 for hours.
    const started = performance.now();
    const outcome = await prepareLogo(Buffer.from(`${'<!---->'.repeat(40)}x`), logos);
    expect(outcome).toEqual({ kind: 'invalid', message: 'The logo must be a PNG or an SVG file.' });
    expect(performance.now() - started).toBeLessThan(1_000);
    // 4096 bytes of comments, the most the sniff reads, also answer at once.
    expect(await prepareLogo(Buffer.from(`${'<!---->'.repeat(600)}x`), logos)).toMatchObject({ kind: 'invalid' });
  });

  test('an SVG after a BOM, an XML declaration, comments and a doctype is still recognised; a comment that never ends is not', async () => {
    const svg = '<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20"><rect width="40" height="20"/></svg>';
    for (const head of ['', '\uFEFF', '<?xml version="1.0"?>\n', '<!-- a - b -->\n<!---->', '<?xml version="1.0"?><!DOCTYPE svg>\n<!-- c -->']) {
      expect((await prepareLogo(Buffer.from(`${head}${svg}`), logos)).kind, JSON.stringify(head)).toBe('ok');
    }
    for (const head of ['<!-- never ends ', '<!DOCTYPE svg', 'x', '<?xml version="1.0"?>x']) {
      expect(await prepareLogo(Buffer.from(`${head}${svg}`), logos), JSON.stringify(head)).toEqual({ kind: 'invalid', message: 'The logo must be a PNG or an SVG file.' });
    }
  });
});

/**
 * The bomb of issue 28, F2: a blurred rectangle through three levels of ten <use>, a thousand
 * blurs from 805 bytes. librsvg drew it for 54 s on the server's libuv pool.
 */
function useBomb(levels: number, fanOut: number): string {
  const uses = (id: string) => Array.from({ length: fanOut }, (_, i) => `<use href="#${id}" x="${i}"/>`).join('');
  const groups = Array.from({ length: levels }, (_, level) => `<g id="l${level + 1}">${uses(`l${level}`)}</g>`).join('');
  return `<svg xmlns="http://www.w3.org/2000/svg" width="600" height="150"><defs><filter id="f"><feGaussianBlur stdDeviation="40"/></filter>` +
    `<rect id="l0" width="600" height="150" filter="url(#f)"/>${groups}</defs><use href="#l${levels}"/></svg>`;
}

describe('SVG bombs (issue 28, F2)', () => {
  test('the <use> bomb is refused before anything draws it, at once', async () => {
    const bomb = useBomb(3, 10);
    const started = performance.now();
    expect(await prepareLogo(Buffer.from(bomb), logos)).toEqual({
      kind: 'invalid',
      message: `The logo has more than ${SVG_LOGO_LIMITS.uses} <use> elements; simplify it, or save it as a PNG.`,
    });
    expect(performance.now() - started).toBeLessThan(500);
  });

  test('elements, nesting, filter effects and declared entities are bounded; a logo within the bounds draws', async () => {
    const svg = (body: string) => Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="100" height="40">${body}</svg>`);
    expect(await prepareLogo(svg('<rect width="1" height="1"/>'.repeat(SVG_LOGO_LIMITS.elements)), logos)).toMatchObject({ message: expect.stringContaining(`more than ${SVG_LOGO_LIMITS.elements} elements`) });
    expect(await prepareLogo(svg(`${'<g>'.repeat(SVG_LOGO_LIMITS.depth)}${'</g>'.repeat(SVG_LOGO_LIMITS.depth)}`), logos)).toMatchObject({ message: expect.stringContaining(`more than ${SVG_LOGO_LIMITS.depth} deep`) });
    const effects = '<feGaussianBlur stdDeviation="1"/>'.repeat(SVG_LOGO_LIMITS.filterPrimitives + 1);
    expect(await prepareLogo(svg(`<filter id="f">${effects}</filter>`), logos)).toMatchObject({ message: expect.stringContaining('filter effects') });
    const entities = Buffer.from('<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY a "aaaaaaaaaa">]><svg xmlns="http://www.w3.org/2000/svg" width="100" height="40"><text>&a;</text></svg>');
    // Entities (billion laughs) are refused by the sniff: the doctype's first '>' ends inside its declarations.
    expect(await prepareLogo(entities, logos)).toEqual({ kind: 'invalid', message: 'The logo must be a PNG or an SVG file.' });
    // Quoted '>' and '/' in attributes, comments and CDATA do not confuse the count.
    const fine = svg(`<!-- <use/><use/><use/><use/><use/><use/><use/><use/><use/> --><style><![CDATA[ rect > g {} ]]></style><g data-x="a>b/"><rect width="100" height="40" fill="#123"/></g>${'<use href="#r"/>'.repeat(SVG_LOGO_LIMITS.uses)}`);
    expect((await prepareLogo(fine, logos)).kind).toBe('ok');
  });

  test('a logo that runs past its CPU cap kills the child and is refused; the next logo draws in a new child', async () => {
    const strict = new LogoProcess({ caps: { cpuMs: 100 } });
    try {
      // Within every structural bound, but far more than 100 ms of drawing (8 layers took about
      // 170 ms on a quiet machine: too near the cap to be sure of it).
      const heavy = Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="4096" height="1024"><filter id="f"><feGaussianBlur stdDeviation="30"/></filter>${'<rect width="4096" height="1024" filter="url(#f)"/>'.repeat(48)}</svg>`);
      const started = performance.now();
      const outcome = await prepareLogo(heavy, strict);
      expect(outcome).toMatchObject({ kind: 'invalid', message: expect.stringContaining('takes too much work to draw') });
      expect(performance.now() - started).toBeLessThan(10_000);
      expect(strict.pid).toBeUndefined();
      const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="200" height="100"><rect width="200" height="100" fill="#123456"/></svg>');
      expect((await prepareLogo(svg, strict)).kind).toBe('ok');
      expect(strict.pid).toEqual(expect.any(Number));
    } finally {
      await strict.close();
    }
  }, 30_000);
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
    const production = new BrandService({ repos: database.repos, isProduction: true, logos });
    const refused = await production.save(account.id, null, { name: 'A', accent: '', contact: '', reportBaseUrl: 'http://reports.example.com' });
    expect(refused).toMatchObject({ kind: 'invalid', errors: { report_base_url: expect.stringContaining('https://') } });
    const development = new BrandService({ repos: database.repos, isProduction: false, logos });
    const saved = await development.save(account.id, null, { name: '  A   brand ', accent: '', contact: '', reportBaseUrl: 'http://localhost:8080/vin/' });
    expect(saved).toMatchObject({ kind: 'saved', brand: { name: 'A brand', reportBaseUrl: 'http://localhost:8080/vin', isDefault: true } });
  });

  test('a token carries a named brand; its reports show it, the others the default; a removed brand falls back', async () => {
    const service = new BrandService({ repos: database.repos, isProduction: false, cacheMs: 60_000, logos });
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
