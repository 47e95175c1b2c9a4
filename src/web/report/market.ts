import type { Lot } from '../../domain/lot.ts';
import type { MarketValue } from '../../domain/market.ts';
import { cleanText, formatAuction, isoInstant } from '../format.ts';
import type { Translator } from './i18n.ts';
import { ticksUpTo, type Tick } from './timeline.ts';

/**
 * "What similar cars sold for": a market value (domain/market.ts) laid out for a page in the
 * reader's language. The report page shows it for the report's vehicle as of the report's time,
 * the website's Market page for the vehicle a visitor picks; both include views/report/market.eta.
 * Pure: the figures come in, formatted text and chart geometry go out.
 */
export interface MarketFigure {
  label: string;
  /** Null: no comparables, shown as a dash. */
  value: string | null;
  note?: string;
}

export interface MarketBar {
  x: number;
  y: number;
  width: number;
  height: number;
  /** The bar's month, median and count in words: the bar's tooltip. */
  label: string;
  /** The count written above the bar, or null where the bars are too narrow for it. */
  count: string | null;
}

export interface MarketChartView {
  width: number;
  height: number;
  plot: { left: number; right: number; top: number; bottom: number };
  bars: MarketBar[];
  priceTicks: Tick[];
  /**
   * Where the price labels stand: left of the plot, or right of it on a right-to-left page. The
   * chart takes the page's direction, so that its words read right; the labels then end at this
   * line on either side (text-anchor end).
   */
  priceLabelX: number;
  /** The latest month's label ends at its slot's outer edge (text-anchor end), so it never leaves the chart. */
  monthTicks: (Tick & { anchor: 'middle' | 'end' })[];
  /** The whole window's median as a dashed line across the months; its label stands in the legend. */
  median: { y: number; label: string } | null;
  summary: string;
  rows: { month: string; count: string; median: string }[];
  labels: { title: string; month: string; sales: string; median: string; table: string };
}

export interface MarketSale {
  vehicle: string;
  lot: string;
  /** The lot's page at its auction, where the auction has one at a known address. */
  href: string | null;
  /** The VIN as the auctions show it to anonymous visitors: its last six characters masked. */
  maskedVin: string;
  date: string | null;
  datetime: string | null;
  price: string | null;
  odometer: string | null;
  damage: { text: string; untranslated: boolean } | null;
}

export interface MarketView {
  title: string;
  /** Which sales are counted: the vehicle, its years, the window. */
  lead: string;
  count: string;
  /** No comparables: what the page says instead of the figures. */
  empty: string | null;
  figures: MarketFigure[];
  chart: MarketChartView | null;
  byDamage: { title: string; labels: { damage: string; sales: string; median: string }; rows: { damage: { text: string; untranslated: boolean }; count: string; median: string }[] } | null;
  closest: { title: string; note: string; opens: string; labels: { vehicle: string; lot: string; date: string; price: string; odometer: string; damage: string }; rows: MarketSale[] } | null;
}

/** Narrower than the timeline's: on a phone the chart shrinks less, and its labels stay legible. */
const WIDTH = 480;
const HEIGHT = 240;
/** Room for the price labels on the side they stand (US$ 60,000 in Arabic), and a margin on the other. */
const AXIS = 84;
const MARGIN = 10;
/** Beyond this many months a bar is too narrow to carry its count. */
const COUNTED_MONTHS = 14;
/** Closest sales and damages shown: the API's ten closest, and the commonest damages. */
const DAMAGES_SHOWN = 6;

const round = (n: number) => Math.round(n * 10) / 10;

/** The Copart and IAAI lot pages (the addresses the landing page's box reads back, domain/lot-ref.ts). */
export function auctionLotUrl(auction: string, lotId: number): string | null {
  if (auction === 'copart') return `https://www.copart.com/lot/${lotId}`;
  if (auction === 'iaai') return `https://www.iaai.com/VehicleDetail/${lotId}~US`;
  return null;
}

/** `5N1DL0MM5KC******`: the first eleven characters, as the auctions show a VIN to anonymous visitors. */
export function maskVin(vin: string): string {
  return vin.length === 17 ? `${vin.slice(0, 11)}******` : vin;
}

/** The `YYYY-MM` months from the window's start to its end, both included (UTC). */
export function windowMonths(from: string, to: string): string[] {
  const start = new Date(from);
  const end = new Date(to);
  const months: string[] = [];
  for (let year = start.getUTCFullYear(), month = start.getUTCMonth(); year < end.getUTCFullYear() || (year === end.getUTCFullYear() && month <= end.getUTCMonth()); month === 11 ? ((month = 0), (year += 1)) : (month += 1)) {
    months.push(`${year}-${String(month + 1).padStart(2, '0')}`);
    // A window is at most 36 months; a malformed one must not loop for long.
    if (months.length > 480) break;
  }
  return months;
}

function percentFormat(t: Translator, digits: number): Intl.NumberFormat {
  return new Intl.NumberFormat(t.language, { style: 'percent', maximumFractionDigits: digits, minimumFractionDigits: 0 });
}

function monthTime(month: string): number {
  return Date.parse(`${month}-01T00:00:00.000Z`);
}

function vehicleText(market: MarketValue): string {
  return `${market.vehicle.make} ${market.vehicle.model}`;
}

function buildChart(market: MarketValue, t: Translator): MarketChartView | null {
  if (market.by_month.length === 0) return null;
  const months = windowMonths(market.window.from, market.window.to);
  const byMonth = new Map(market.by_month.map((entry) => [entry.month, entry]));
  const rtl = t.dir === 'rtl';
  const plot = rtl ? { left: MARGIN, right: WIDTH - AXIS, top: 20, bottom: HEIGHT - 30 } : { left: AXIS, right: WIDTH - MARGIN, top: 20, bottom: HEIGHT - 30 };
  const slot = (plot.right - plot.left) / months.length;
  // Time runs the way the page reads: left to right, or right to left on an Arabic page.
  const slotStart = (index: number) => (rtl ? plot.right - (index + 1) * slot : plot.left + index * slot);
  const yOf = (fraction: number) => round(plot.bottom - fraction * (plot.bottom - plot.top));
  const highest = Math.max(...market.by_month.map((entry) => entry.median_price), market.comparables.price.median ?? 0);
  const price = ticksUpTo(highest, yOf, (value) => t.formatMoney(value)!);
  const barWidth = round(Math.max(2, slot * 0.62));
  const bars: MarketBar[] = [];
  months.forEach((month, index) => {
    const entry = byMonth.get(month);
    if (!entry) return;
    const y = yOf(entry.median_price / price.top);
    bars.push({
      x: round(slotStart(index) + (slot - barWidth) / 2),
      y,
      width: barWidth,
      height: round(plot.bottom - y),
      label: t.t('market.barLabel', { month: t.formatMonth(monthTime(month)), median: t.formatMoney(entry.median_price)!, count: entry.count }),
      count: months.length <= COUNTED_MONTHS ? t.formatInteger(entry.count) : null,
    });
  });
  // Month labels: the latest month always, and every step-th before it, so that they never crowd.
  const step = Math.max(1, Math.ceil(months.length / 4));
  const latest = months.length - 1;
  const monthTicks = months.flatMap((month, index): MarketChartView['monthTicks'] => {
    if ((latest - index) % step !== 0) return [];
    const label = t.formatMonth(monthTime(month));
    // The chart takes the page's direction: "end" is the right edge of a left-to-right label and the left edge of a right-to-left one.
    if (index === latest) return [{ at: round(rtl ? slotStart(index) : slotStart(index) + slot), label, anchor: 'end' }];
    return [{ at: round(slotStart(index) + slot / 2), label, anchor: 'middle' }];
  });
  const median = market.comparables.price.median;
  return {
    width: WIDTH,
    height: HEIGHT,
    plot,
    bars,
    priceTicks: price.ticks,
    priceLabelX: rtl ? plot.right + 8 : plot.left - 8,
    monthTicks,
    median: median === null ? null : { y: yOf(median / price.top), label: t.t('market.medianLine', { median: t.formatMoney(median)! }) },
    summary: t.t('market.chartSummary', { months: market.by_month.length }),
    rows: market.by_month.map((entry) => ({ month: t.formatMonth(monthTime(entry.month)), count: t.formatInteger(entry.count)!, median: t.formatMoney(entry.median_price)! })),
    labels: {
      title: t.t('market.chartTitle'),
      month: t.t('market.month'),
      sales: t.t('market.sales'),
      median: t.t('market.medianPrice'),
      table: t.t('market.chartTable'),
    },
  };
}

function presentSale(lot: Lot, t: Translator): MarketSale {
  const name = [lot.year === null ? null : String(lot.year), cleanText(lot.brand), cleanText(lot.model)].filter((part) => part !== null).join(' ');
  const damage = t.term('damage', cleanText(lot.primary_damage));
  return {
    vehicle: name === '' ? (cleanText(lot.name) ?? maskVin(lot.vin)) : name,
    lot: t.t('lot.ref', { auction: formatAuction(lot.auction), lot: String(lot.lot_id) }),
    href: auctionLotUrl(lot.auction, lot.lot_id),
    maskedVin: maskVin(lot.vin),
    date: t.formatDate(lot.sale_date),
    datetime: isoInstant(lot.sale_date),
    price: t.formatMoney(lot.price),
    odometer: t.formatMiles(lot.odometer),
    damage,
  };
}

/** The market value as a page section in the reader's language. */
export function presentMarket(market: MarketValue, t: Translator): MarketView {
  const { price, count } = market.comparables;
  const range = (low: number | null, high: number | null) => (low === null || high === null ? null : t.t('market.between', { low: t.formatMoney(low)!, high: t.formatMoney(high)! }));
  const share = market.comparables.share_of_retail_value.median;
  const lead = t.t('market.lead', {
    vehicle: vehicleText(market),
    yearFrom: String(market.vehicle.year - 1),
    yearTo: String(market.vehicle.year + 1),
    from: t.formatDate(market.window.from)!,
    to: t.formatDate(market.window.to)!,
  });
  const figures: MarketFigure[] = [
    { label: t.t('market.median'), value: t.formatMoney(price.median) },
    { label: t.t('market.spread'), value: range(price.p25, price.p75), note: t.t('market.spreadNote') },
    { label: t.t('market.range'), value: range(price.min, price.max) },
    { label: t.t('market.retailShare'), value: share === null ? null : percentFormat(t, 0).format(share), note: t.t('market.retailShareNote') },
  ];
  return {
    title: t.t('market.title'),
    lead,
    count: t.t('market.count', { count }),
    empty: count === 0 ? t.t('market.none') : null,
    figures,
    chart: buildChart(market, t),
    byDamage:
      market.by_damage.length === 0
        ? null
        : {
            title: t.t('market.byDamage'),
            labels: { damage: t.t('field.primaryDamage'), sales: t.t('market.sales'), median: t.t('market.medianPrice') },
            rows: market.by_damage.slice(0, DAMAGES_SHOWN).map((entry) => ({
              damage: t.term('damage', entry.primary_damage) ?? { text: entry.primary_damage, untranslated: false },
              count: t.formatInteger(entry.count)!,
              median: t.formatMoney(entry.median_price)!,
            })),
          },
    closest:
      market.closest.length === 0
        ? null
        : {
            title: t.t('market.closest'),
            note: t.t('market.closestNote'),
            opens: t.t('market.opensAuction'),
            labels: {
              vehicle: t.t('market.vehicle'),
              lot: t.t('timeline.lot'),
              date: t.t('timeline.date'),
              price: t.t('figure.price'),
              odometer: t.t('figure.odometer'),
              damage: t.t('field.primaryDamage'),
            },
            rows: market.closest.map((lot) => presentSale(lot, t)),
          },
  };
}

/**
 * How one sold lot's price compares with the market of its sale ("18% below the median of 42
 * similar sales"), or null when there is nothing to compare: no price, or no comparables.
 */
export function compareWithMarket(salePrice: number | null, market: MarketValue | null, t: Translator): string | null {
  const median = market?.comparables.price.median ?? null;
  if (market === null || salePrice === null || salePrice <= 0 || median === null || median <= 0) return null;
  const values = { count: market.comparables.count };
  // Whole percents, as a buyer reads them; under half a percent is "at the median".
  const difference = Math.round(((salePrice - median) / median) * 100);
  if (difference === 0) return t.t('market.compareAt', values);
  const percent = percentFormat(t, 0).format(Math.abs(difference) / 100);
  return t.t(difference < 0 ? 'market.compareBelow' : 'market.compareAbove', { ...values, percent });
}

/** A sold lot's key in ReportMarket.sales. */
export function saleKey(lot: Pick<Lot, 'auction' | 'lot_id'>): string {
  return `${lot.auction}:${lot.lot_id}`;
}

/** The months of market before a sold lot's sale that its price is compared with. */
export const SALE_COMPARISON_MONTHS = 12;

/** What a report page shows of the market, as of the report's time. */
export interface ReportMarket {
  /** The report's vehicle; null when neither its lots nor its VIN say its make, model and year. */
  vehicle: MarketValue | null;
  /** Each sold lot's market (the SALE_COMPARISON_MONTHS before its sale), by saleKey. */
  sales: ReadonlyMap<string, MarketValue>;
}
