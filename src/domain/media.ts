/**
 * The photo archive's vocabulary: how an archived photo is named and what the queue knows of an
 * image URL. A photo is named by the sha256 of its bytes, so one content is stored once however
 * many URLs (or lots) show it, and a name never points at other bytes: it can be cached forever.
 */

/** The sizes made besides the original: a thumbnail for the report page, a display size for a screen. */
export const RENDITIONS = {
  thumb: { width: 320, height: 240 },
  display: { width: 1280, height: 960 },
} as const;
export type RenditionName = keyof typeof RENDITIONS;
/** Renditions are WebP whatever the original was: small, and every browser in use shows it. */
export const RENDITION_EXT = 'webp';

/** The formats archived, by the extension their files get. */
export const MEDIA_TYPES = {
  jpg: 'image/jpeg',
  png: 'image/png',
  webp: 'image/webp',
  gif: 'image/gif',
  avif: 'image/avif',
} as const;
export type MediaExt = keyof typeof MEDIA_TYPES;

export function isMediaExt(value: string): value is MediaExt {
  return Object.hasOwn(MEDIA_TYPES, value);
}

/** A photo's file name: `<sha256>.<ext>` for the original, `<sha256>-<size>.webp` for a rendition. */
export interface MediaName {
  readonly hash: string;
  readonly size: RenditionName | null;
  readonly ext: MediaExt;
}

const NAME = /^([0-9a-f]{64})(?:-(thumb|display))?\.([a-z]{3,4})$/;

export function parseMediaName(name: string): MediaName | null {
  const match = NAME.exec(name);
  if (!match) return null;
  const [, hash, size, ext] = match;
  if (!isMediaExt(ext!)) return null;
  if (size !== undefined && ext !== RENDITION_EXT) return null;
  return { hash: hash!, size: (size as RenditionName | undefined) ?? null, ext: ext };
}

export function mediaFileName(name: MediaName): string {
  return name.size === null ? `${name.hash}.${name.ext}` : `${name.hash}-${name.size}.${RENDITION_EXT}`;
}

/** Where the archive's copies are served, under PUBLIC_BASE_URL. */
export const MEDIA_PATH = '/media';
/**
 * The same files under the report path, for branded report pages: a reseller proxies `/report/*`
 * to the service and nothing else, and its pages link their photos relatively, under it.
 */
export const REPORT_MEDIA_PATH = '/report/media';

/** An image URL whose copy exists: its content's hash and the original's extension. */
export interface ArchivedImage {
  readonly hash: string;
  readonly ext: MediaExt;
}

/** One image URL claimed by an archiver, for the length of its lease. */
export interface MediaClaim {
  readonly id: number;
  readonly url: string;
  readonly host: string;
  /** Attempts made before this one. */
  readonly attempts: number;
}

/** One archived content, as the archiver records it. */
export interface MediaObject {
  readonly hash: string;
  readonly ext: MediaExt;
  readonly contentType: string;
  readonly bytes: number;
  readonly renditionBytes: number;
  readonly width: number;
  readonly height: number;
}

export interface MediaHostStatus {
  readonly host: string;
  readonly queued: number;
  /** Queued again after a failed attempt, waiting for its next one. */
  readonly retrying: number;
  readonly archived: number;
  /** Given up after every attempt failed; tried again after a long pause, or at once with --retry-failed. */
  readonly failed: number;
  /** Bytes of the archived originals and their renditions from this host (shared contents counted per host). */
  readonly bytes: number;
}

export interface MediaStatus {
  readonly queued: number;
  readonly retrying: number;
  readonly archived: number;
  readonly failed: number;
  readonly removed: number;
  /** Distinct contents stored. */
  readonly objects: number;
  /** Bytes stored: every distinct original and its renditions, once. */
  readonly bytes: number;
  readonly hosts: readonly MediaHostStatus[];
  /** The latest failures, newest first, for the operator to look at. */
  readonly recentErrors: readonly { readonly url: string; readonly error: string; readonly attempts: number }[];
}
