import { createHash } from 'node:crypto';
import sharp from 'sharp';
import { BRAND_LIMITS } from '../domain/brand.ts';

export type LogoOutcome = { kind: 'ok'; png: Buffer; hash: string } | { kind: 'invalid'; message: string };

/** The stored logo fits this box: a report shows it 32 px high, so this is sharp on any screen and in print. */
const OUT_WIDTH = 640;
const OUT_HEIGHT = 160;

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

const WHITESPACE = /\s/;

/**
 * Whether the file starts as an SVG does: an optional BOM and XML declaration, then any comments
 * and doctypes, then `<svg`. A scanner that moves forward only, so its time is linear in the 4 KiB
 * it reads: the regex it replaces backtracked over repeated comments, doubling its time with each
 * (issue 28, F1: 281 bytes held the event loop for good).
 */
function looksLikeSvg(bytes: Buffer): boolean {
  const head = bytes.subarray(0, 4096).toString('utf8');
  let at = head.startsWith('\uFEFF') ? 1 : 0;
  const skipSpace = () => {
    while (at < head.length && WHITESPACE.test(head[at]!)) at++;
  };
  const startsHere = (word: string) => head.slice(at, at + word.length).toLowerCase() === word;
  /** Moves past the next `end` after `from`; false when there is none. */
  const skipPast = (end: string, from: number) => {
    const found = head.indexOf(end, from);
    if (found < 0) return false;
    at = found + end.length;
    return true;
  };
  skipSpace();
  if (startsHere('<?xml')) {
    if (!skipPast('>', at)) return false;
    skipSpace();
  }
  for (;;) {
    if (startsHere('<!--')) {
      if (!skipPast('-->', at + 4)) return false;
    } else if (startsHere('<!doctype')) {
      if (!skipPast('>', at)) return false;
    } else {
      break;
    }
    skipSpace();
  }
  return startsHere('<svg') && (head[at + 4] === '>' || WHITESPACE.test(head[at + 4] ?? ''));
}

/**
 * An uploaded logo (PNG or SVG) made into the PNG the reports show. An SVG is rasterised (librsvg,
 * through sharp) and never served as SVG: what comes out is pixels, so no script, event handler or
 * foreignObject of the upload survives by construction, and librsvg, reading from memory with no
 * base location, loads no external reference. A PNG is decoded and encoded anew, which drops its
 * metadata and anything appended to it. Sizes are checked before decoding (the file) and from the
 * header before rendering (the pixels), so that a small file cannot ask for a huge image.
 */
export async function prepareLogo(bytes: Buffer): Promise<LogoOutcome> {
  if (bytes.length === 0) return { kind: 'invalid', message: 'The logo file is empty.' };
  if (bytes.length > BRAND_LIMITS.logoBytes) {
    return { kind: 'invalid', message: `The logo is ${Math.ceil(bytes.length / 1024)} KiB; it may be at most ${BRAND_LIMITS.logoBytes / 1024} KiB.` };
  }
  const isPng = bytes.subarray(0, 8).equals(PNG_SIGNATURE);
  const isSvg = !isPng && looksLikeSvg(bytes);
  if (!isPng && !isSvg) return { kind: 'invalid', message: 'The logo must be a PNG or an SVG file.' };

  const maxPixels = BRAND_LIMITS.logoMaxPixels * BRAND_LIMITS.logoMaxPixels;
  let width: number;
  let height: number;
  try {
    // The header only, nothing decoded: read without the pixel limit, so the message can say the size.
    const meta = await sharp(bytes, { limitInputPixels: false }).metadata();
    if (meta.format !== (isPng ? 'png' : 'svg') || !meta.width || !meta.height) throw new Error('unexpected format');
    width = meta.width;
    height = meta.height;
  } catch {
    return { kind: 'invalid', message: `The logo could not be read as ${isPng ? 'a PNG' : 'an SVG'} image.` };
  }
  const { logoMinPixels: min, logoMaxPixels: max } = BRAND_LIMITS;
  if (width < min || height < min || width > max || height > max) {
    return { kind: 'invalid', message: `The logo is ${width}×${height} pixels; each side must be from ${min} to ${max} pixels.` };
  }

  try {
    // A vector logo is drawn at the density that fills the box, rather than scaled up from 72 dpi.
    const scale = Math.min(OUT_WIDTH / width, OUT_HEIGHT / height);
    const input = isSvg ? sharp(bytes, { density: Math.max(1, Math.min(72 * scale, 2400)), limitInputPixels: maxPixels * 4 }) : sharp(bytes, { limitInputPixels: maxPixels });
    const png = await input
      .timeout({ seconds: 5 })
      .resize({ width: OUT_WIDTH, height: OUT_HEIGHT, fit: 'inside', withoutEnlargement: true })
      .png({ compressionLevel: 9 })
      .toBuffer();
    if (png.length > BRAND_LIMITS.logoBytes) {
      return { kind: 'invalid', message: `The logo makes a PNG of ${Math.ceil(png.length / 1024)} KiB; simplify it to under ${BRAND_LIMITS.logoBytes / 1024} KiB.` };
    }
    return { kind: 'ok', png, hash: createHash('sha256').update(png).digest('hex') };
  } catch {
    return { kind: 'invalid', message: 'The logo could not be drawn. Save it again as a plain PNG or SVG.' };
  }
}
