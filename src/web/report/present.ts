import type { Lot } from '../../domain/lot.ts';
import type { StoredReport } from '../../domain/report.ts';
import { historyKeyOf, redFlags, type LotRef, type RedFlag } from '../../domain/red-flags.ts';
import type { LotHistory } from '../../history/lot-history.ts';
import { buildHistory, type HistoryView } from './history.ts';
import { REPORT_LANGUAGE_NAMES, REPORT_LANGUAGES, type ReportLanguage } from '../../domain/report-language.ts';
import { cleanText, formatAuction, isoInstant } from '../format.ts';
import { translatorFor, type GlossaryCategory, type Term, type Translator } from './i18n.ts';
import { buildTimeline, type TimelineView } from './timeline.ts';
import { compareWithMarket, presentMarket, saleKey, type MarketView, type ReportMarket } from './market.ts';

/** A labelled value; null means unknown, which the template shows as a dash. */
export interface Field {
  label: string;
  value: string | null;
  /** A line under the value, e.g. the kind of odometer reading. */
  note?: string;
  /** The auction's own (English) words, with no translation in the glossary: marked lang="en". */
  untranslated?: true;
}

/** A group of known values only: the page leaves out rows nobody reported. */
export interface FieldGroup {
  title: string;
  fields: Field[];
}

export interface Photo {
  /** Null in a PDF whose photo could not be fetched in time: a placeholder is drawn instead. */
  src: string | null;
  /** Where the photo opens full size (the auction's URL). */
  href: string;
  alt: string;
}

export interface FlagView {
  kind: RedFlag['kind'];
  title: string;
  /** The lots that show it, as a sentence. */
  seenIn: string;
}

export interface LotView {
  /** Fragment id, so that one lot of a report can be linked to. */
  anchor: string;
  auction: string;
  lotId: string;
  heading: string;
  /** The vehicle as this lot names it, when it says more than the page heading. */
  name: string | null;
  /** No sale date: an upcoming sale (or one the auction has not reported). */
  upcoming: boolean;
  saleDate: { before: string; text: string; after: string; datetime: string | null } | null;
  /** Sale price, odometer, retail value and repair cost: always all four, for comparing lots. */
  figures: Field[];
  details: FieldGroup[];
  photos: Photo[];
  /** Photos left out of a PDF (it carries a few per lot; the page has them all). */
  morePhotos: string | null;
  /** The titles of the red flags this lot shows. */
  flags: string[];
  /** How its sale price compares with the market before its sale ("18% below the median of 42 similar sales"). */
  market: string | null;
  /** What changed and when, first and last seen, from which sources (lot history); null when none is kept. */
  history: HistoryView | null;
}

/** Whose report it is: ours, or (once white label lands) a reseller's. */
export interface Brand {
  name: string;
  logoUrl: string | null;
  /** A CSS colour (#rrggbb) for accents, or null for ours. */
  accent: string | null;
  contact: string | null;
  /** Our own brand: the page may then point readers to the service. */
  ours: boolean;
}

export const OUR_BRAND: Brand = Object.freeze({ name: 'vinhistory', logoUrl: null, accent: null, contact: null, ours: true });

export interface LanguageLink {
  code: ReportLanguage;
  name: string;
  current: boolean;
}

export interface ReportView {
  id: string;
  vin: string;
  lang: ReportLanguage;
  dir: 'ltr' | 'rtl';
  /** The document's <title>. */
  title: string;
  /** `2010 MERCEDES-BENZ GL 450`, or null when no lot names the vehicle. */
  vehicleName: string | null;
  vehicleFacts: Field[];
  madeAt: { before: string; text: string; after: string; datetime: string | null };
  lotCount: string;
  flags: FlagView[];
  flagCount: string;
  timeline: TimelineView | null;
  /** What similar cars sold for, as of the report's time. */
  market: MarketView | null;
  lots: LotView[];
  languages: LanguageLink[];
  brand: Brand;
  /** The page's fixed words, by message key. */
  text: Record<string, string>;
}

export interface PresentOptions {
  language?: ReportLanguage;
  brand?: Brand;
  /**
   * For the PDF: the photo to embed for an auction URL (a data: URI), or null for a placeholder; and
   * how many photos of a lot it carries. The page links every photo where the auction serves it.
   */
  photoSource?: (url: string) => string | null;
  maxPhotosPerLot?: number;
  /**
   * The photo archive's resolver: what the page shows (the archived thumbnail) and opens (the
   * archived full image) for an auction URL. Without it, the auction's URL for both.
   */
  photoLinks?: PhotoResolver;
  /** The market of the report's vehicle and of each sold lot; without it, the page has no market section. */
  market?: ReportMarket;
  /** Each lot's history as of the report's time, by `auction/lot_id` (history-service.ts, historiesForReport). */
  histories?: ReadonlyMap<string, LotHistory>;
}

/** An image URL of a snapshot to what the page shows and opens (the photo archive's resolver). */
export type PhotoResolver = (url: string) => { src: string; href: string };

/** The fixed words the template lays out. */
const PAGE_TEXT = [
  'report.eyebrow',
  'report.vin',
  'report.snapshot',
  'report.testReport',
  'report.testReportText',
  'report.order',
  'report.noLots',
  'report.id',
  'report.language',
  'report.share',
  'report.copyLink',
  'report.linkCopied',
  'report.copyFailed',
  'report.downloadPdf',
  'report.getReports',
  'report.footer',
  'flags.title',
  'flags.none',
  'lot.upcoming',
  'lot.noSaleDate',
  'figure.unknown',
  'photos.title',
  'photos.none',
  'photos.opens',
  'photos.unavailable',
  'details.none',
  'history.firstSeen',
] as const;

/** The newest lot's value of a field (lots are stored newest first): the freshest description. */
function newest<K extends keyof Lot>(lots: readonly Lot[], field: K): NonNullable<Lot[K]> | null {
  for (const lot of lots) {
    const value = lot[field];
    if (value === null || value === undefined) continue;
    if (typeof value === 'string' && cleanText(value) === null) continue;
    return value;
  }
  return null;
}

function vehicleName(year: number | null, name: string | null, brand: string | null, model: string | null): string | null {
  // The spec's name is the full name (brand, model, trim); brand and model are the fallback.
  const base = name ?? ([brand, model].filter((part) => part !== null).join(' ') || null);
  if (base === null) return year === null ? null : String(year);
  if (year === null || base.includes(String(year))) return base;
  return `${year} ${base}`;
}

function known(fields: Field[]): Field[] {
  return fields.filter((field) => field.value !== null);
}

/**
 * Only web links reach the page: an image "URL" such as javascript: or a relative path would
 * otherwise become a live href under our origin.
 */
export function isWebUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:';
  } catch {
    return false;
  }
}

/** A field from a glossary term: its text, marked when it is the auction's English. */
function termField(label: string, term: Term | null): Field {
  if (term === null) return { label, value: null };
  return term.untranslated ? { label, value: term.text, untranslated: true } : { label, value: term.text };
}

/** "VALLEJO" -> "Vallejo": places are names, so each word is capitalised. */
function placeCase(value: string | null): string | null {
  if (value === null || /\p{Ll}/u.test(value)) return value;
  return value.toLowerCase().replace(/(^|[\s-])(\p{L})/gu, (_m, space: string, letter: string) => space + letter.toUpperCase()).replace(/, ([a-z]{2})$/i, (_m, state: string) => `, ${state.toUpperCase()}`);
}

function lotRefText(t: Translator, ref: { auction: string; lotId: number | string }): string {
  return t.t('lot.ref', { auction: formatAuction(ref.auction), lot: String(ref.lotId) });
}

function sameLot(ref: LotRef, lot: Lot): boolean {
  return ref.auction === lot.auction && ref.lotId === lot.lot_id;
}

function presentFlag(flag: RedFlag, t: Translator): FlagView {
  const title = flag.readings
    ? t.t('flag.odometer-rollback', {
        from: t.formatMiles(flag.readings.from.odometer)!,
        fromDate: t.formatDate(flag.readings.from.lot.saleDate) ?? '',
        to: t.formatMiles(flag.readings.to.odometer)!,
        toDate: t.formatDate(flag.readings.to.lot.saleDate) ?? '',
      })
    : flag.kind === 'relisted'
      ? t.t('flag.relisted', { count: flag.lots.length })
      : t.t(`flag.${flag.kind}`);
  const lots = flag.lots.map((ref) => {
    const date = t.formatDate(ref.saleDate);
    return date ? `${lotRefText(t, ref)} (${date})` : lotRefText(t, ref);
  });
  return { kind: flag.kind, title, seenIn: t.t('flags.seenIn', { lots: lots.join(', ') }) };
}

/** Upcoming lots (no sale date) first, then the stored order: newest sale first. */
function pageOrder(lots: readonly Lot[]): Lot[] {
  return [...lots.filter((lot) => lot.sale_date === null), ...lots.filter((lot) => lot.sale_date !== null)];
}

function presentLot(lot: Lot, pageName: string | null, t: Translator, flags: readonly RedFlag[], flagViews: readonly FlagView[], options: PresentOptions): LotView {
  const auction = formatAuction(lot.auction);
  const lotId = String(lot.lot_id);
  const saleText = t.formatDate(lot.sale_date);
  const lotName = vehicleName(lot.year, cleanText(lot.name), cleanText(lot.brand), cleanText(lot.model));
  const term = (category: GlossaryCategory, value: string | null) => t.term(category, cleanText(value));
  const sources = lot.images.filter(isWebUrl);
  const shown = options.maxPhotosPerLot === undefined ? sources : sources.slice(0, options.maxPhotosPerLot);
  const odometerType = term('odometer', lot.odometer_type);
  const miles = t.formatMiles(lot.odometer);
  const odometerNote = [t.formatKilometres(lot.odometer), odometerType?.text].filter((part) => part !== null && part !== undefined).join(' · ');
  const figures: Field[] = [
    { label: t.t('figure.price'), value: t.formatMoney(lot.price) },
    { label: t.t('figure.odometer'), value: miles, ...(miles !== null && odometerNote !== '' ? { note: odometerNote } : {}) },
    { label: t.t('figure.retailValue'), value: t.formatMoney(lot.retail_value) },
    { label: t.t('figure.repairCost'), value: t.formatMoney(lot.repair_cost) },
  ];
  const location = placeCase([cleanText(lot.location), cleanText(lot.location_zip)].filter((part) => part !== null).join(', ') || null);
  const details: FieldGroup[] = [
    {
      title: t.t('group.condition'),
      fields: known([
        termField(t.t('field.primaryDamage'), term('damage', lot.primary_damage)),
        termField(t.t('field.secondaryDamage'), term('damage', lot.secondary_damage)),
        termField(t.t('field.highlight'), term('highlight', lot.highlight)),
        termField(t.t('field.keys'), term('keys', lot.keys)),
        termField(t.t('field.document'), term('document', lot.document)),
        // A reading type without a reading would float alone; it is shown under the figure otherwise.
        ...(lot.odometer === null ? [termField(t.t('field.odometerType'), odometerType)] : []),
        { label: t.t('field.location'), value: location },
      ]),
    },
    {
      title: t.t('group.vehicle'),
      fields: known([
        { label: t.t('field.engine'), value: cleanText(lot.engine) },
        { label: t.t('field.cylinders'), value: t.formatInteger(lot.cylinders) },
        termField(t.t('field.transmission'), term('transmission', lot.transmission)),
        termField(t.t('field.drive'), term('drive', lot.drive)),
        termField(t.t('field.fuel'), term('fuel', lot.fuel)),
        termField(t.t('field.body'), term('body', lot.body)),
        termField(t.t('field.color'), term('color', lot.color)),
      ]),
    },
  ].filter((group) => group.fields.length > 0);

  const sold = saleText === null ? null : t.around('lot.sold', 'date');
  const hidden = sources.length - shown.length;
  return {
    anchor: `lot-${lot.auction}-${lotId}`,
    auction,
    lotId,
    heading: t.t('lot.number', { lot: lotId }),
    name: lotName !== null && lotName !== pageName ? lotName : null,
    upcoming: lot.sale_date === null,
    saleDate: sold === null ? null : { before: sold.before, text: saleText!, after: sold.after, datetime: isoInstant(lot.sale_date) },
    figures,
    details,
    photos: shown.map((url, index) => {
      const link = options.photoLinks ? options.photoLinks(url) : { src: url, href: url };
      return {
        src: options.photoSource ? options.photoSource(url) : link.src,
        href: link.href,
        alt: t.t('photos.alt', { n: index + 1, total: sources.length, auction, lot: lotId }),
      };
    }),
    morePhotos: hidden > 0 ? t.t('photos.more', { count: hidden }) : null,
    flags: flags.flatMap((flag, index) => (flag.lots.some((ref) => sameLot(ref, lot)) ? [flagViews[index]!.title] : [])),
    market: lot.sale_date === null ? null : compareWithMarket(lot.price, options.market?.sales.get(saleKey(lot)) ?? null, t),
    history: historyView(lot, t, options),
  };
}

/**
 * The view model of a report page (and of its PDF): everything formatted in the reader's language,
 * unknown values null and empty groups dropped, so that the template only lays it out.
 */
export function presentReport(report: StoredReport, options: PresentOptions = {}): ReportView {
  const language = options.language ?? 'en';
  const t = translatorFor(language);
  const { lots } = report;
  const year = newest(lots, 'year');
  const brand = cleanText(newest(lots, 'brand'));
  const model = cleanText(newest(lots, 'model'));
  const name = vehicleName(year, cleanText(newest(lots, 'name')), brand, model);
  const histories = options.histories;
  const flags = redFlags(lots, histories ? new Map([...histories].map(([key, history]) => [key, history.versions])) : undefined);
  const flagViews = flags.map((flag) => presentFlag(flag, t));
  const made = t.around('report.madeAt', 'time');
  const type = t.term('type', cleanText(newest(lots, 'type')));
  return {
    id: report.id,
    vin: report.vin,
    lang: language,
    dir: t.dir,
    title: name ? t.t('report.documentTitle', { vehicle: name, vin: report.vin }) : t.t('report.documentTitleNoName', { vin: report.vin }),
    vehicleName: name,
    vehicleFacts: known([
      { label: t.t('fact.year'), value: year === null ? null : String(year) },
      { label: t.t('fact.make'), value: brand },
      { label: t.t('fact.model'), value: model },
      { label: t.t('fact.trim'), value: cleanText(newest(lots, 'configuration')) },
      termField(t.t('fact.type'), type),
    ]),
    madeAt: { ...made, text: t.formatDateTime(report.createdAt), datetime: isoInstant(report.createdAt) },
    lotCount: t.t('report.lotCount', { count: lots.length }),
    flags: flagViews,
    flagCount: t.t('flags.count', { count: flags.length }),
    timeline: buildTimeline(lots, t),
    market: options.market?.vehicle ? presentMarket(options.market.vehicle, t) : null,
    lots: pageOrder(lots).map((lot) => presentLot(lot, name, t, flags, flagViews, options)),
    languages: REPORT_LANGUAGES.map((code) => ({ code, name: REPORT_LANGUAGE_NAMES[code], current: code === language })),
    brand: options.brand ?? OUR_BRAND,
    text: Object.fromEntries(PAGE_TEXT.map((key) => [key, t.t(key)])),
  };
}

function historyView(lot: Lot, t: Translator, options: PresentOptions): HistoryView | null {
  const history = options.histories?.get(historyKeyOf(lot));
  return history ? buildHistory(history, t) : null;
}

/** The page's <title>: the vehicle first, as that is what a reader scans tabs and history for. */
export function reportTitle(view: ReportView): string {
  return view.title;
}
