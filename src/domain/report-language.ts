/**
 * The languages a report page and its PDF are written in. English is the fallback: the language
 * of the auctions' own records, and of every page but the report.
 */
export const REPORT_LANGUAGES = ['en', 'es', 'pl', 'uk', 'ru', 'ro', 'ka', 'ar'] as const;

export type ReportLanguage = (typeof REPORT_LANGUAGES)[number];

export const DEFAULT_REPORT_LANGUAGE: ReportLanguage = 'en';

/** Each language by its own name, as a reader looks for it in a switcher. */
export const REPORT_LANGUAGE_NAMES: Readonly<Record<ReportLanguage, string>> = {
  en: 'English',
  es: 'Español',
  pl: 'Polski',
  uk: 'Українська',
  ru: 'Русский',
  ro: 'Română',
  ka: 'ქართული',
  ar: 'العربية',
};

/** Written right to left. */
export const RTL_LANGUAGES: ReadonlySet<ReportLanguage> = new Set(['ar']);

export function isReportLanguage(value: unknown): value is ReportLanguage {
  return typeof value === 'string' && (REPORT_LANGUAGES as readonly string[]).includes(value);
}
