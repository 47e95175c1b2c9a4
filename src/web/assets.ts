import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The website's static files, served under /assets/. */
export const ASSETS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), 'assets');

/**
 * The stylesheet, one file per area, in cascade order: a file may build on those before it, never
 * on those after it. Pages get the files joined into one sheet, STYLESHEET, rather than a link per
 * file: a page then makes one render-blocking request for its styles instead of six, under the one
 * content-hashed URL it has always had.
 */
const STYLESHEET_PARTS = ['base.css', 'layout.css', 'components.css', 'site.css', 'account.css', 'journey.css', 'report.css', 'market.css'];

/** The joined stylesheet's name under /assets/. */
export const STYLESHEET = 'app.css';

/** The parts are reached only through the joined sheet, never at an address of their own. */
export function isStylesheetPart(file: string): boolean {
  return STYLESHEET_PARTS.includes(file);
}

/** The stylesheet's parts, read and joined in cascade order. */
export function readStylesheet(): string {
  return STYLESHEET_PARTS.map((part) => readFileSync(path.join(ASSETS_DIR, part), 'utf8')).join('\n');
}

/** Ten hex digits of the content's SHA-256: enough to tell one release of a file from another. */
export function contentHash(content: string | Buffer): string {
  return createHash('sha256').update(content).digest('hex').slice(0, 10);
}

/**
 * The URL of an asset with its content hash, so that browsers may keep it for long and still see a
 * new release. The content is the file's, unless given (an asset built at start-up).
 */
export function assetHref(basePath: string, file: string, content: string | Buffer = readFileSync(path.join(ASSETS_DIR, file))): string {
  return `${basePath}/assets/${file}?v=${contentHash(content)}`;
}
