import sharp from 'sharp';
import { BRAND_LIMITS } from '../domain/brand.ts';
// Imported for its settings too: libvips on one thread with no cache in the child that renders.
import './image-check.ts';

/** What drawing an uploaded logo came to: a PNG, or why not (a message for the brand form). */
export type LogoRender = { kind: 'ok'; png: Uint8Array } | { kind: 'invalid'; message: string };

/** The stored logo fits this box: a report shows it 32 px high, so this is sharp on any screen and in print. */
const OUT_WIDTH = 640;
const OUT_HEIGHT = 160;

/**
 * Decodes an uploaded logo (PNG or SVG, as the server sniffed it) and draws it as the PNG the
 * reports show. An SVG is rasterised by librsvg and never served as SVG: no script, handler or
 * foreignObject survives, and librsvg, reading from memory with no base location, loads no
 * external reference. A PNG is decoded and encoded anew, which drops its metadata and anything
 * appended to it. Sizes are read from the header before anything is drawn, so a small file cannot
 * ask for a huge image. This runs in the image child process (image-worker.ts), under its caps.
 */
export async function renderLogo(bytes: Buffer, format: 'png' | 'svg'): Promise<LogoRender> {
  const maxPixels = BRAND_LIMITS.logoMaxPixels * BRAND_LIMITS.logoMaxPixels;
  let width: number;
  let height: number;
  try {
    // The header only, nothing decoded: read without the pixel limit, so the message can say the size.
    const meta = await sharp(bytes, { limitInputPixels: false }).metadata();
    if (meta.format !== format || !meta.width || !meta.height) throw new Error('unexpected format');
    width = meta.width;
    height = meta.height;
  } catch {
    return { kind: 'invalid', message: `The logo could not be read as ${format === 'png' ? 'a PNG' : 'an SVG'} image.` };
  }
  const { logoMinPixels: min, logoMaxPixels: max } = BRAND_LIMITS;
  if (width < min || height < min || width > max || height > max) {
    return { kind: 'invalid', message: `The logo is ${width}×${height} pixels; each side must be from ${min} to ${max} pixels.` };
  }
  try {
    // A vector logo is drawn at the density that fills the box, rather than scaled up from 72 dpi.
    const scale = Math.min(OUT_WIDTH / width, OUT_HEIGHT / height);
    const input =
      format === 'svg'
        ? sharp(bytes, { density: Math.max(1, Math.min(72 * scale, 2400)), limitInputPixels: maxPixels * 4 })
        : sharp(bytes, { limitInputPixels: maxPixels });
    const png = await input.resize({ width: OUT_WIDTH, height: OUT_HEIGHT, fit: 'inside', withoutEnlargement: true }).png({ compressionLevel: 9 }).toBuffer();
    return { kind: 'ok', png };
  } catch {
    return { kind: 'invalid', message: 'The logo could not be drawn. Save it again as a plain PNG or SVG.' };
  }
}
