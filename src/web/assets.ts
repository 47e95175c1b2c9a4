import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The website's static files, served under /assets/. */
export const ASSETS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), 'assets');

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
