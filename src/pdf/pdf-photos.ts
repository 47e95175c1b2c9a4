import type { OutboundClient } from '../outbound/outbound-client.ts';

/** Photo types a PDF embeds: the auctions' JPEGs and the odd PNG or WebP. SVG is not a photo. */
const PHOTO_TYPES = new Set(['image/jpeg', 'image/png', 'image/webp', 'image/gif']);
/** Auction photos are 50-300 KiB; a larger answer is not a lot photo. */
export const MAX_PHOTO_BYTES = 3 * 1024 * 1024;

export interface PhotoFetchOptions {
  /** For all of them together: a photo not in by then is drawn as a placeholder. */
  budgetMs: number;
  /** Fetches at once. */
  concurrency?: number;
}

/**
 * The photos a PDF embeds, as data: URIs by URL, fetched through the guarded outbound client (the
 * auctions' URLs come from feeds: a private address is refused there). Whatever fails, is not an
 * image or misses the time budget is left out, and the PDF shows a placeholder in its place.
 */
export async function fetchPhotos(client: OutboundClient, urls: readonly string[], options: PhotoFetchOptions): Promise<Map<string, string>> {
  const deadline = Date.now() + options.budgetMs;
  const found = new Map<string, string>();
  const queue = [...new Set(urls)];
  const worker = async () => {
    for (let url = queue.shift(); url !== undefined; url = queue.shift()) {
      const left = deadline - Date.now();
      if (left <= 0) return;
      try {
        const answer = await client.request(url, { method: 'GET', timeoutMs: left, maxBytes: MAX_PHOTO_BYTES, maxRedirects: 3, headers: { accept: 'image/*' } });
        const type = String(answer.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
        if (answer.status === 200 && PHOTO_TYPES.has(type) && answer.body.length > 0) {
          found.set(url, `data:${type};base64,${answer.body.toString('base64')}`);
        }
      } catch {
        // Refused, timed out, too large, unreachable: a placeholder, as for any photo we cannot have.
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(options.concurrency ?? 8, queue.length) }, worker));
  return found;
}
