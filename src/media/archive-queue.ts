import type { Lot } from '../domain/lot.ts';
import type { LotsWrittenHook } from '../storage/repositories/lots-written.ts';
import type { QueuedUrl } from '../storage/repositories/media-repository.ts';

/** The host an image URL is fetched from, or null for a URL that cannot be fetched at all. */
function hostOf(url: string): string | null {
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'https:' || parsed.protocol === 'http:' ? parsed.hostname : null;
  } catch {
    return null;
  }
}

/**
 * What the photo archive queues of these lots: every fetchable image URL (http or https), once
 * each, in the lots' order and each lot's order, with the host it is fetched from.
 */
export function queuedUrlsOf(lots: Iterable<Pick<Lot, 'images'>>): QueuedUrl[] {
  const seen = new Set<string>();
  const urls: QueuedUrl[] = [];
  for (const lot of lots) {
    for (const url of lot.images) {
      if (seen.has(url)) continue;
      seen.add(url);
      const host = hostOf(url);
      if (host !== null) urls.push({ url, host });
    }
  }
  return urls;
}

/**
 * The archive's part in storing lots, when it is on (container.ts): the image URLs of every lot a
 * batch inserts or changes are queued in the batch's transaction (docs/media.md). An unchanged lot
 * has the images it had, queued when they came.
 */
export const photoArchiveQueue: LotsWrittenHook = {
  async beforeWrite(tx) {
    return async ({ lots, statuses }) => {
      await tx.media.enqueue(
        queuedUrlsOf(lots.filter((lot, i) => statuses[i] !== 'unchanged' && lot.images.length > 0)),
        new Date(tx.at),
      );
    };
  },
};
