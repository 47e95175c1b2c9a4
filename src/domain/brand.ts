/**
 * White label: a reseller's brand, shown on its reports instead of ours. An account has at most
 * one default brand (its reports show it) and may name others that a token carries, for one of the
 * reseller's sites.
 */
export interface AccountBrand {
  id: string;
  accountId: string;
  /** The account's default brand; the others are chosen per token. */
  isDefault: boolean;
  /** The display name, shown in the page's title, bar and footer, and in the PDF's footer. */
  name: string;
  /** SHA-256 (hex) of the logo's PNG: its address, `/report/brand/<hash>.png`. */
  logoHash: string | null;
  /** `#rrggbb`, dark enough for white text on it (see `accentProblem`). */
  accent: string | null;
  contact: string | null;
  /** Where the reseller proxies `/report/*` to us, without a trailing slash: report_url is built from it. */
  reportBaseUrl: string | null;
  createdAt: string;
  updatedAt: string;
}

export const BRAND_LIMITS = Object.freeze({
  nameLength: 60,
  contactLength: 200,
  baseUrlLength: 200,
  /** The uploaded file, PNG or SVG. */
  logoBytes: 256 * 1024,
  /** Each side of the uploaded image, in pixels (an SVG's own width and height). */
  logoMinPixels: 16,
  logoMaxPixels: 4096,
  /** Named brands besides the default: one per reseller site is plenty. */
  namedBrands: 20,
});

/** WCAG's minimum contrast for normal text: white text on the accent (buttons), and the accent on white (links). */
export const ACCENT_MIN_CONTRAST = 4.5;

function luminance(hex: string): number {
  const channel = (offset: number) => {
    const value = Number.parseInt(hex.slice(offset, offset + 2), 16) / 255;
    return value <= 0.03928 ? value / 12.92 : ((value + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
}

/** WCAG contrast ratio of white against a `#rrggbb` colour (1 to 21). */
export function contrastWithWhite(hex: string): number {
  return 1.05 / (luminance(hex) + 0.05);
}

/**
 * Why an accent colour cannot be used, or null when it can. A colour too light for white text is
 * refused rather than darkened: the reseller sees the rule and picks the shade, instead of finding
 * on their reports a colour they did not choose.
 */
export function accentProblem(value: string): string | null {
  if (!/^#[0-9a-f]{6}$/i.test(value)) return 'Give the accent colour as #rrggbb, e.g. #0b5394.';
  const ratio = contrastWithWhite(value);
  if (ratio < ACCENT_MIN_CONTRAST) {
    return `White text on ${value} has a contrast of ${ratio.toFixed(2)}:1; it needs at least ${ACCENT_MIN_CONTRAST}:1 to stay readable. Choose a darker shade.`;
  }
  return null;
}
