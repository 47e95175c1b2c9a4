import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { IntlMessageFormat } from 'intl-messageformat';
import { REPORT_LANGUAGES, RTL_LANGUAGES, type ReportLanguage } from '../../domain/report-language.ts';

/**
 * The report page's words in each language: one catalogue file per language under i18n/, with ICU
 * messages (plurals included) and a glossary of the auctions' own words (damage, title, highlight,
 * ...). A value the glossary does not know is shown as the auction wrote it, its casing evened out.
 */
export const GLOSSARY_CATEGORIES = ['damage', 'document', 'highlight', 'keys', 'odometer', 'fuel', 'transmission', 'drive', 'color', 'body', 'type'] as const;
export type GlossaryCategory = (typeof GLOSSARY_CATEGORIES)[number];

export interface Catalogue {
  messages: Record<string, string>;
  glossary: Record<GlossaryCategory, Record<string, string>>;
}

export const I18N_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'i18n');

export function readCatalogue(language: ReportLanguage): Catalogue {
  return JSON.parse(readFileSync(path.join(I18N_DIR, `${language}.json`), 'utf8')) as Catalogue;
}

/** A text, and whether it is the auction's own (English) words rather than a translation. */
export interface Term {
  text: string;
  untranslated: boolean;
}

/** Words kept in capitals when a value shouting in capitals is calmed down. */
const ACRONYMS = new Set(['SUV', 'CVT', 'AWD', 'FWD', 'RWD', '4WD', '4X4', 'VIN', 'USA', 'US', 'EV', 'UTV', 'ATV', 'RV', 'DOHC', 'SOHC', 'II', 'III', 'IV']);

/**
 * "FRONT END" -> "Front end", "WATER/FLOOD" -> "Water/flood": feeds write some fields in capitals,
 * which read as shouting. Text with lower-case letters is left as written; codes with digits, known
 * acronyms and a state in parentheses keep their capitals.
 */
export function displayCase(text: string): string {
  if (/\p{Ll}/u.test(text)) return text;
  let first = true;
  return text.replace(/\(([A-Z]{2})\)|[\p{L}\p{N}]+/gu, (word, state: string | undefined) => {
    if (state !== undefined) return word;
    const keep = /\d/.test(word) || ACRONYMS.has(word);
    const cased = keep ? word : first ? word[0]! + word.slice(1).toLowerCase() : word.toLowerCase();
    first = false;
    return cased;
  });
}

/** The glossary's key for a value: lower case, letters and digits, single spaces. */
export function glossaryKey(value: string): string {
  return value.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ' ').trim();
}

/** "SC - SALVAGE CERTIFICATE (CA)" -> the words and the issuing state. */
function splitDocument(value: string): { words: string; state: string | null } {
  const match = /^(?:[A-Z]{2}\s+-\s+)?(.*?)(?:\s*\(([A-Za-z]{2})\))?$/.exec(value.trim());
  return { words: match?.[1] ?? value, state: match?.[2]?.toUpperCase() ?? null };
}

const UTC = 'UTC';

/** One language's messages, glossary and number and date formats. */
export class Translator {
  readonly language: ReportLanguage;
  readonly dir: 'ltr' | 'rtl';
  private readonly catalogue: Catalogue;
  private readonly compiled = new Map<string, IntlMessageFormat>();
  private readonly money: Intl.NumberFormat;
  private readonly miles: Intl.NumberFormat;
  private readonly kilometres: Intl.NumberFormat;
  private readonly integer: Intl.NumberFormat;
  private readonly day: Intl.DateTimeFormat;
  private readonly shortDay: Intl.DateTimeFormat;
  private readonly moment: Intl.DateTimeFormat;

  constructor(language: ReportLanguage, catalogue: Catalogue) {
    this.language = language;
    this.dir = RTL_LANGUAGES.has(language) ? 'rtl' : 'ltr';
    this.catalogue = catalogue;
    // Auction figures are US dollars and miles whatever the reader's language; only their writing changes.
    this.money = new Intl.NumberFormat(language, { style: 'currency', currency: 'USD', maximumFractionDigits: 0, minimumFractionDigits: 0 });
    this.miles = new Intl.NumberFormat(language, { style: 'unit', unit: 'mile', unitDisplay: 'short', maximumFractionDigits: 0 });
    this.kilometres = new Intl.NumberFormat(language, { style: 'unit', unit: 'kilometer', unitDisplay: 'short', maximumFractionDigits: 0 });
    this.integer = new Intl.NumberFormat(language, { maximumFractionDigits: 0 });
    this.day = new Intl.DateTimeFormat(language, { timeZone: UTC, dateStyle: 'medium' });
    this.shortDay = new Intl.DateTimeFormat(language, { timeZone: UTC, year: 'numeric', month: 'short' });
    this.moment = new Intl.DateTimeFormat(language, { timeZone: UTC, dateStyle: 'medium', timeStyle: 'short', hourCycle: 'h23' });
  }

  /** The message `key` with its values; an unknown key throws, so that a test catches it. */
  t(key: string, values?: Record<string, string | number>): string {
    let format = this.compiled.get(key);
    if (!format) {
      const source = this.catalogue.messages[key];
      if (source === undefined) throw new Error(`No message "${key}" in the ${this.language} catalogue`);
      format = new IntlMessageFormat(source, this.language);
      this.compiled.set(key, format);
    }
    return String(format.format(values));
  }

  /**
   * A message around one value that the page marks up (a `<time>`, say): the text before and after
   * it, so that each language places the value where its grammar wants it.
   */
  around(key: string, name: string, values: Record<string, string | number> = {}): { before: string; after: string } {
    const marker = '\u{E000}';
    const text = this.t(key, { ...values, [name]: marker });
    const at = text.indexOf(marker);
    return at < 0 ? { before: text, after: '' } : { before: text.slice(0, at), after: text.slice(at + marker.length) };
  }

  /** An auction's word in this language, or as written (casing evened out) where the glossary has none. */
  term(category: GlossaryCategory, value: string | null): Term | null {
    if (value === null) return null;
    if (category === 'document') {
      const { words, state } = splitDocument(value);
      const found = this.catalogue.glossary.document[glossaryKey(words)];
      const text = found ?? displayCase(words);
      return { text: state ? `${text} (${state})` : text, untranslated: found === undefined && this.language !== 'en' };
    }
    const found = this.catalogue.glossary[category][glossaryKey(value)];
    return found !== undefined ? { text: found, untranslated: false } : { text: displayCase(value), untranslated: this.language !== 'en' };
  }

  formatMoney(amount: number | null): string | null {
    return amount === null ? null : this.money.format(amount);
  }

  formatMiles(miles: number | null): string | null {
    return miles === null ? null : this.miles.format(miles);
  }

  /** The same reading in kilometres, for readers who think in them. */
  formatKilometres(miles: number | null): string | null {
    return miles === null ? null : this.kilometres.format(Math.round(miles * 1.609344));
  }

  formatInteger(value: number | null): string | null {
    return value === null ? null : this.integer.format(value);
  }

  /** A sale day; the time is left out (feeds disagree on it). A value that is not a date is shown as given. */
  formatDate(iso: string | null): string | null {
    if (iso === null) return null;
    const time = Date.parse(iso);
    return Number.isNaN(time) ? iso : this.day.format(time);
  }

  /** "Mar 2024": an axis label of the timeline. */
  formatMonth(time: number): string {
    return this.shortDay.format(time);
  }

  /** The moment a report was made, in UTC, said so. */
  formatDateTime(iso: string): string {
    const time = Date.parse(iso);
    return Number.isNaN(time) ? iso : `${this.moment.format(time)} UTC`;
  }
}

const translators = new Map<ReportLanguage, Translator>(
  REPORT_LANGUAGES.map((language) => [language, new Translator(language, readCatalogue(language))]),
);

/** The translator of a language (built once at start: the catalogues are small and fixed). */
export function translatorFor(language: ReportLanguage): Translator {
  return translators.get(language)!;
}
