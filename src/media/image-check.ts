import sharp, { type Metadata } from 'sharp';
import { MEDIA_TYPES, RENDITIONS, type MediaExt, type RenditionName } from '../domain/media.ts';

/**
 * Decoding a tiny file that claims 100,000 x 100,000 pixels would take gigabytes: anything above
 * 50 megapixels (a 8,660 x 5,770 photo; the auctions' are under 2 megapixels) is refused unread.
 */
export const MAX_INPUT_PIXELS = 50_000_000;

export type ImageCheck =
  | { readonly ok: true; readonly ext: MediaExt; readonly contentType: string; readonly width: number; readonly height: number }
  | { readonly ok: false; readonly reason: string };

/** The format the first bytes announce, whatever the server's Content-Type said. */
export function sniffImage(bytes: Buffer): MediaExt | null {
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'jpg';
  if (bytes.length >= 8 && bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'png';
  if (bytes.length >= 6 && (bytes.subarray(0, 6).toString('latin1') === 'GIF87a' || bytes.subarray(0, 6).toString('latin1') === 'GIF89a')) return 'gif';
  if (bytes.length >= 12 && bytes.subarray(0, 4).toString('latin1') === 'RIFF' && bytes.subarray(8, 12).toString('latin1') === 'WEBP') return 'webp';
  if (bytes.length >= 12 && bytes.subarray(4, 8).toString('latin1') === 'ftyp') {
    const brand = bytes.subarray(8, 12).toString('latin1');
    if (brand === 'avif' || brand === 'avis') return 'avif';
  }
  return null;
}

const SHARP_FORMATS: Record<MediaExt, string> = { jpg: 'jpeg', png: 'png', webp: 'webp', gif: 'gif', avif: 'heif' };

/**
 * Whether the bytes are a photo the archive keeps: the magic bytes name one of the formats, and
 * sharp reads the same format with sane dimensions from the header. A page of HTML served as
 * image/jpeg (an auction's "photo removed" page), a truncated header or a bomb fails here.
 */
export async function checkImage(bytes: Buffer): Promise<ImageCheck> {
  const ext = sniffImage(bytes);
  if (ext === null) return { ok: false, reason: 'not an image (the content is none of JPEG, PNG, WebP, GIF, AVIF)' };
  let metadata: Metadata;
  try {
    metadata = await sharp(bytes, { limitInputPixels: MAX_INPUT_PIXELS }).metadata();
  } catch (error) {
    return { ok: false, reason: `not a readable image (${(error as Error).message})` };
  }
  if (metadata.format !== SHARP_FORMATS[ext]) return { ok: false, reason: `the content is not the ${ext} its first bytes announce` };
  const { width, height } = metadata;
  if (!width || !height) return { ok: false, reason: 'an image without dimensions' };
  if (width * height > MAX_INPUT_PIXELS) return { ok: false, reason: `${width} x ${height} pixels is larger than the archive keeps` };
  return { ok: true, ext, contentType: MEDIA_TYPES[ext], width, height };
}

export type Renditions = Record<RenditionName, Buffer>;

/**
 * Image work is CPU work that shares the machine with the searches. It runs in a child process at
 * a low priority (image-process.ts), one photo at a time, each on one libvips thread: archiving
 * takes at most about one core however many photos are being fetched (MEDIA_CONCURRENCY bounds the
 * fetches, which mostly wait), and that core goes to the searches whenever they want it. Every
 * photo is new to libvips, so its operation cache would only hold memory.
 */
sharp.concurrency(1);
sharp.cache(false);

/**
 * The thumbnail and the display size, as WebP, turned upright by the photo's EXIF orientation and
 * never enlarged. The original is decoded once, at the display size (libvips shrinks a JPEG while
 * decoding it), and the thumbnail is made from those pixels. An animated GIF gives its first frame.
 * A truncated body that sharp can still partly decode fails here rather than archiving a broken photo.
 * WebP at effort 2 takes half the CPU of the default (4) for a few percent more bytes.
 */
export async function makeRenditions(bytes: Buffer): Promise<Renditions> {
  const { data, info } = await sharp(bytes, { limitInputPixels: MAX_INPUT_PIXELS, failOn: 'error' })
    .rotate()
    .resize({ ...RENDITIONS.display, fit: 'inside', withoutEnlargement: true })
    .raw()
    .toBuffer({ resolveWithObject: true });
  const raw = { raw: { width: info.width, height: info.height, channels: info.channels } };
  const display = await sharp(data, raw).webp({ quality: 80, effort: 2 }).toBuffer();
  const thumb = await sharp(data, raw)
    .resize({ ...RENDITIONS.thumb, fit: 'inside', withoutEnlargement: true })
    .webp({ quality: 70, effort: 2 })
    .toBuffer();
  return { thumb, display };
}
