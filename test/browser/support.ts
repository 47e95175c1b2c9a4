/// <reference lib="dom" />
// The functions passed to page.evaluate run in the browser; the DOM types check them.
import fs, { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { createRequire } from 'node:module';
import { IN_CI } from '../support/env.ts';

const AXE_SOURCE = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * axe-core's violations of impact serious or critical on the page as it is, one line each (rule,
 * impact, the first offending elements). Evaluated through the DevTools protocol, so that the
 * page's CSP (no inline script) does not stop it.
 */
export async function axeViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE_SOURCE);
  return page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(context: Document, options: object): Promise<{ violations: { id: string; impact: string | null; nodes: { target: string[] }[] }[] }> } }).axe;
    const { violations } = await axe.run(document, { resultTypes: ['violations'] });
    return violations
      .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
      .map((violation) => `${violation.impact} ${violation.id}: ${violation.nodes.slice(0, 3).map((node) => node.target.join(' ')).join(', ')}`);
  });
}

export const CHROMIUM = '/usr/bin/chromium';

/** A developer without Debian's chromium may skip; CI may not (a missing browser fails there). */
export const runnable = existsSync(CHROMIUM) || IN_CI;

/**
 * The committed screenshots in docs/screenshots are refreshed with UPDATE_SCREENSHOTS=1; an
 * ordinary run writes them to a temporary folder so that `npm test` leaves the work tree clean.
 */
export const SCREENSHOTS = process.env.UPDATE_SCREENSHOTS
  ? path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../docs/screenshots')
  : fs.mkdtempSync(path.join(os.tmpdir(), 'vinhistory-screenshots-'));

/** Debian's chromium, headless, with the flags this machine's closed network needs. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`CI=true but ${CHROMIUM} is missing: install Debian's chromium (apt-get install chromium).`);
  await mkdir(SCREENSHOTS, { recursive: true });
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
  });
}

export interface ContrastOptions {
  /** Elements (and their descendants) not checked: visually hidden helpers and the like. */
  skip: string;
  /** Also pass over elements with display: none. */
  skipUndisplayed?: boolean;
}

/** Text whose colour against its backdrop is below WCAG AA (4.5:1, or 3:1 for large text). */
export async function lowContrastTexts(page: Page, options: ContrastOptions): Promise<string[]> {
  return page.evaluate(({ skip, skipUndisplayed }) => {
    const channels = (color: string) => (color.match(/[\d.]+/g) ?? []).map(Number);
    const luminance = ([r, g, b]: number[]) =>
      [r!, g!, b!]
        .map((c) => c / 255)
        .map((c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4))
        .reduce((sum, c, i) => sum + c * [0.2126, 0.7152, 0.0722][i]!, 0);
    const backdrop = (element: Element): number[] => {
      for (let node: Element | null = element; node; node = node.parentElement) {
        const rgba = channels(getComputedStyle(node).backgroundColor);
        if (rgba.length === 3 || (rgba.length === 4 && rgba[3] === 1)) return rgba;
      }
      return [255, 255, 255];
    };
    const failures: string[] = [];
    for (const element of Array.from(document.querySelectorAll('body *'))) {
      const hasText = Array.from(element.childNodes).some((node) => node.nodeType === Node.TEXT_NODE && node.textContent!.trim() !== '');
      const style = getComputedStyle(element);
      if (!hasText || style.visibility === 'hidden' || (skipUndisplayed && style.display === 'none') || element.closest(skip)) continue;
      const a = luminance(channels(style.color));
      const b = luminance(backdrop(element));
      const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
      const size = parseFloat(style.fontSize);
      const large = size >= 24 || (size >= 18.66 && Number(style.fontWeight) >= 700);
      if (ratio < (large ? 3 : 4.5)) failures.push(`${element.tagName.toLowerCase()}.${element.className} "${element.textContent.trim().slice(0, 30)}" ${ratio.toFixed(2)}`);
    }
    return failures;
  }, { skip: options.skip, skipUndisplayed: options.skipUndisplayed ?? false });
}
