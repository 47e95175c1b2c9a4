import { DEFAULT_REPORT_LANGUAGE, isReportLanguage, type ReportLanguage } from '../../domain/report-language.ts';

export type Paper = 'a4' | 'letter';

/** Accept-Language is a short list; anything longer is not a browser's. */
const MAX_ACCEPT_LANGUAGE = 512;

/** The header's language ranges, best first (q=0 ranges dropped), as lower-case tags. */
export function acceptedLanguages(header: string | undefined): string[] {
  if (!header) return [];
  return header
    .slice(0, MAX_ACCEPT_LANGUAGE)
    .split(',')
    .map((part, index) => {
      const [tag = '', ...params] = part.trim().split(';');
      const q = params.map((p) => /^\s*q\s*=\s*([01](?:\.\d{0,3})?)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
      return { tag: tag.trim().toLowerCase(), q: q === undefined ? 1 : Number(q), index };
    })
    .filter((entry) => entry.tag !== '' && entry.q > 0)
    .sort((a, b) => b.q - a.q || a.index - b.index)
    .map((entry) => entry.tag);
}

/** The first of the reader's languages we write reports in ("uk-UA" -> uk), or null. */
export function languageFromHeader(header: string | undefined): ReportLanguage | null {
  for (const tag of acceptedLanguages(header)) {
    const primary = tag.split('-')[0];
    if (isReportLanguage(primary)) return primary;
  }
  return null;
}

export interface LanguageChoice {
  /** `?lang=` of the request. */
  query: string | undefined;
  /** The default language the report's account set, if any. */
  accountDefault: string | null;
  acceptLanguage: string | undefined;
}

/**
 * The report's language: the link's `?lang=` (a reseller's link, a reader's switch), then the
 * account's default (a reseller serving one market), then the reader's browser, then English. A
 * value we do not write is passed over, not an error: a stale or hand-made link still opens.
 */
export function chooseLanguage(choice: LanguageChoice): ReportLanguage {
  if (isReportLanguage(choice.query)) return choice.query;
  if (isReportLanguage(choice.accountDefault)) return choice.accountDefault;
  return languageFromHeader(choice.acceptLanguage) ?? DEFAULT_REPORT_LANGUAGE;
}

/** Where Letter is the paper in the shops: the US and Canada, Mexico and much of Latin America, the Philippines. */
const LETTER_REGIONS = new Set(['us', 'ca', 'mx', 'ph', 'co', 've', 'cl', 'gt', 'pr', 'do', 'cr', 'pa', 'sv', 'ni', 'bz']);

/**
 * The PDF's paper: `?paper=`, else Letter for a reader whose first language names a Letter region
 * (en-US, es-MX), else A4 (the rest of the world, and every reader who names no region).
 */
export function choosePaper(query: string | undefined, acceptLanguage: string | undefined): Paper {
  if (query === 'a4' || query === 'letter') return query;
  const first = acceptedLanguages(acceptLanguage)[0];
  const region = first?.split('-').find((part, index) => index > 0 && /^[a-z]{2}$/.test(part));
  return region !== undefined && LETTER_REGIONS.has(region) ? 'letter' : 'a4';
}
