import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { FastifyReply } from 'fastify';
import type { AccountBrand } from '../../domain/brand.ts';
import { ASSETS_DIR, contentHash, readStylesheet, STYLESHEET } from '../assets.ts';
import { fontFaceCss } from './fonts.ts';
import type { Brand } from './present.ts';

/**
 * A brand's accent as a stylesheet rule, when it is a plain #rrggbb colour (nothing else reaches
 * CSS). The colour is dark enough for white text (the brand form checks it); in the dark scheme,
 * where text on the accent is dark and links sit on a dark page, it is mixed with white instead.
 */
export function accentCss(brand: Brand): string | null {
  if (brand.accent === null || !/^#[0-9a-fA-F]{6}$/.test(brand.accent)) return null;
  const a = brand.accent.toLowerCase();
  return (
    `:root{--accent:${a};--accent-strong:${a};--accent-soft:${mix(a, '#ffffff', 0.08)};--on-accent:#ffffff}` +
    `@media (prefers-color-scheme:dark){:root{--accent:${mix(a, '#ffffff', 0.4)};--accent-strong:${mix(a, '#ffffff', 0.25)};--accent-soft:${mix(a, '#0f1217', 0.3)};--on-accent:#0f1217}}`
  );
}

/** `weight` of colour `a` and the rest of `b`, as #rrggbb (computed here: the PDF's and older browsers' CSS need no color-mix). */
function mix(a: string, b: string, weight: number): string {
  const channel = (hex: string, i: number) => Number.parseInt(hex.slice(1 + 2 * i, 3 + 2 * i), 16);
  return `#${[0, 1, 2].map((i) => Math.round(channel(a, i) * weight + channel(b, i) * (1 - weight)).toString(16).padStart(2, '0')).join('')}`;
}

/**
 * Lets one inline <style> through the page's CSP by its hash (style-src stays 'self' otherwise):
 * a brand's accent colour is the only style a report writes inline.
 */
export function allowStyle(reply: FastifyReply, css: string): void {
  const csp = reply.getHeader('content-security-policy');
  if (typeof csp !== 'string') return;
  const hash = createHash('sha256').update(css).digest('base64');
  reply.header('content-security-policy', csp.replace("style-src 'self'", `style-src 'self' 'sha256-${hash}'`));
}

/** A reseller's brand as the page shows it, its logo at the address `logoSrc` gives. */
export function brandView(brand: AccountBrand, logoSrc: (hash: string) => string): Brand {
  return { name: brand.name, logoUrl: brand.logoHash ? logoSrc(brand.logoHash) : null, accent: brand.accent, contact: brand.contact, ours: false };
}

/**
 * What a branded page links under /report/ (a reseller's proxy forwards /report/* only): its
 * stylesheet, script and fonts, and the fonts' stylesheet, whose font URLs are relative to it.
 */
export const BRANDED_FONTS_CSS = fontFaceCss((face) => `fonts/${face.file}`);
export const REPORT_SCRIPT = readFileSync(path.join(ASSETS_DIR, 'report.js'));

/** The links of a branded page's assets, under `prefix` (`./` on a report page, which works behind any proxy). */
export function brandedAssets(prefix: string): { fontsHref: string; stylesheetHref: string; scriptHref: string } {
  return {
    fontsHref: `${prefix}assets/report-fonts.css?v=${contentHash(BRANDED_FONTS_CSS)}`,
    stylesheetHref: `${prefix}assets/${STYLESHEET}?v=${contentHash(readStylesheet())}`,
    scriptHref: `${prefix}assets/report.js?v=${contentHash(REPORT_SCRIPT)}`,
  };
}
