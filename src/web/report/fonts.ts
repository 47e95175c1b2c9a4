import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

/**
 * The report's fonts, from npm (@fontsource's Noto Sans builds): Latin and Cyrillic, Georgian and
 * Arabic, regular and bold. A reader's phone may lack Georgian or Arabic glyphs, and the PDF is
 * rendered on a server that has no fonts of its own, so the report carries them; nothing is
 * downloaded at run time. Each face names its unicode-range, so that a browser fetches only the
 * scripts a page uses.
 */
const require = createRequire(import.meta.url);

/** The subsets each package contributes (the rest, such as math symbols, are not needed). */
const SUBSETS: Record<string, readonly string[]> = {
  '@fontsource/noto-sans': ['latin', 'latin-ext', 'cyrillic', 'cyrillic-ext'],
  '@fontsource/noto-sans-georgian': ['georgian'],
  '@fontsource/noto-sans-arabic': ['arabic'],
};
const WEIGHTS = ['400', '700'] as const;

export interface FontFace {
  family: string;
  weight: string;
  unicodeRange: string;
  /** The woff2 file's name (unique across the packages) and where it is on disk. */
  file: string;
  path: string;
}

function packageDir(name: string): string {
  return path.dirname(require.resolve(`${name}/package.json`));
}

/** Reads the faces from each package's own stylesheet, where its unicode ranges are. */
function readFaces(): FontFace[] {
  const faces: FontFace[] = [];
  for (const [name, subsets] of Object.entries(SUBSETS)) {
    const dir = packageDir(name);
    for (const weight of WEIGHTS) {
      const css = readFileSync(path.join(dir, `${weight}.css`), 'utf8');
      for (const block of css.split('@font-face').slice(1)) {
        const family = /font-family:\s*'([^']+)'/.exec(block)?.[1];
        const file = /url\(\.\/files\/([^)]+\.woff2)\)/.exec(block)?.[1];
        const range = /unicode-range:\s*([^;]+);/.exec(block)?.[1];
        if (!family || !file || !range) continue;
        const subset = file.replace(/^noto-sans(-georgian|-arabic)?-/, '').replace(`-${weight}-normal.woff2`, '');
        if (!subsets.includes(subset)) continue;
        faces.push({ family, weight, unicodeRange: range.trim(), file, path: path.join(dir, 'files', file) });
      }
    }
  }
  return faces;
}

export const FONT_FACES: readonly FontFace[] = readFaces();

/** The report's font stack: Noto for each script, the system's as a fallback. */
export const REPORT_FONT_STACK = `'Noto Sans', 'Noto Sans Georgian', 'Noto Sans Arabic', system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif`;

/** @font-face rules with each file at `urlOf(face)`: a URL under /assets/ for the page, a data: URI for the PDF. */
export function fontFaceCss(urlOf: (face: FontFace) => string, include: (face: FontFace) => boolean = () => true): string {
  return FONT_FACES.filter(include).map(
    (face) =>
      `@font-face{font-family:'${face.family}';font-style:normal;font-weight:${face.weight};font-display:swap;src:url(${urlOf(face)}) format('woff2');unicode-range:${face.unicodeRange}}`,
  ).join('\n');
}

/** The face served under this file name, or undefined. */
export function fontFile(file: string): FontFace | undefined {
  return FONT_FACES.find((face) => face.file === file);
}

/** The faces (all, or those `include` keeps) inlined, for a document rendered with no network. */
export function inlineFontFaceCss(include?: (face: FontFace) => boolean): string {
  return fontFaceCss((face) => `data:font/woff2;base64,${readFileSync(face.path).toString('base64')}`, include);
}
