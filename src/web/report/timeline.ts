import type { Lot } from '../../domain/lot.ts';
import { formatAuction } from '../format.ts';
import type { Translator } from './i18n.ts';

/**
 * The vehicle's timeline: each dated lot's sale price and odometer on one chart, drawn on the server
 * as inline SVG (no script, prints in the PDF as vectors), with the same figures as a table for
 * screen readers and for anyone who prefers numbers.
 */
export interface TimelinePoint {
  x: number;
  /** Null where the lot has no price (or no reading). */
  priceY: number | null;
  odometerY: number | null;
}

export interface Tick {
  /** Position along its axis, in chart units. */
  at: number;
  label: string;
}

export interface TimelineRow {
  date: string;
  datetime: string;
  lot: string;
  price: string | null;
  odometer: string | null;
}

export interface TimelineView {
  width: number;
  height: number;
  plot: { left: number; right: number; top: number; bottom: number };
  points: TimelinePoint[];
  /** SVG path of the odometer line through the lots that have a reading. */
  odometerPath: string | null;
  priceTicks: Tick[];
  odometerTicks: Tick[];
  dateTicks: Tick[];
  rows: TimelineRow[];
  summary: string;
  labels: { title: string; price: string; odometer: string; date: string; lot: string; table: string; undated: string | null };
}

const WIDTH = 640;
const HEIGHT = 240;
const PLOT = { left: 70, right: WIDTH - 78, top: 14, bottom: HEIGHT - 30 };

/** A round step for about `count` ticks up to `max`: 1, 2 or 5 times a power of ten. */
function niceStep(max: number, count: number): number {
  const raw = max / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw)!;
  return step;
}

export function ticksUpTo(max: number, place: (value: number) => number, label: (value: number) => string): { top: number; ticks: Tick[] } {
  const step = niceStep(Math.max(max, 1), 4);
  const top = Math.ceil(Math.max(max, 1) / step) * step;
  const ticks: Tick[] = [];
  for (let value = 0; value <= top + step / 2; value += step) ticks.push({ at: 0, label: label(value) });
  return { top, ticks: ticks.map((tick, index) => ({ ...tick, at: place((index * step) / top) })) };
}

const round = (n: number) => Math.round(n * 10) / 10;

export function buildTimeline(lots: readonly Lot[], t: Translator): TimelineView | null {
  const dated = lots
    .map((lot) => ({ lot, time: lot.sale_date === null ? Number.NaN : Date.parse(lot.sale_date) }))
    .filter((entry) => !Number.isNaN(entry.time) && (entry.lot.price !== null || entry.lot.odometer !== null))
    .sort((a, b) => a.time - b.time);
  if (dated.length === 0) return null;

  const first = dated[0]!.time;
  const last = dated[dated.length - 1]!.time;
  const span = last - first;
  const xOf = (time: number) => round(span === 0 ? (PLOT.left + PLOT.right) / 2 : PLOT.left + ((time - first) / span) * (PLOT.right - PLOT.left));
  const yOf = (fraction: number) => round(PLOT.bottom - fraction * (PLOT.bottom - PLOT.top));

  const maxPrice = Math.max(0, ...dated.map((entry) => entry.lot.price ?? 0));
  const maxOdometer = Math.max(0, ...dated.map((entry) => entry.lot.odometer ?? 0));
  const price = ticksUpTo(maxPrice, yOf, (value) => t.formatMoney(value)!);
  const odometer = ticksUpTo(maxOdometer, yOf, (value) => t.formatInteger(value)!);

  const points = dated.map(({ lot, time }) => ({
    x: xOf(time),
    priceY: lot.price === null ? null : yOf(lot.price / price.top),
    odometerY: lot.odometer === null ? null : yOf(lot.odometer / odometer.top),
  }));
  const read = points.filter((point) => point.odometerY !== null);
  const odometerPath = read.length > 1 ? read.map((point, i) => `${i === 0 ? 'M' : 'L'}${point.x} ${point.odometerY}`).join(' ') : null;

  // Date ticks: the first and last sale, and one between when there is room.
  const dateTicks: Tick[] = span === 0 ? [{ at: xOf(first), label: t.formatMonth(first) }] : [{ at: xOf(first), label: t.formatMonth(first) }, { at: xOf(last), label: t.formatMonth(last) }];
  if (span > 0 && dated.length > 2) dateTicks.splice(1, 0, { at: xOf(first + span / 2), label: t.formatMonth(first + span / 2) });

  const undated = lots.length - dated.length;
  return {
    width: WIDTH,
    height: HEIGHT,
    plot: PLOT,
    points,
    odometerPath,
    priceTicks: price.ticks,
    odometerTicks: odometer.ticks,
    dateTicks,
    rows: dated.map(({ lot, time }) => ({
      date: t.formatDate(lot.sale_date)!,
      datetime: new Date(time).toISOString(),
      lot: t.t('lot.ref', { auction: formatAuction(lot.auction), lot: String(lot.lot_id) }),
      price: t.formatMoney(lot.price),
      odometer: t.formatMiles(lot.odometer),
    })),
    summary: t.t('timeline.summary', { count: dated.length }),
    labels: {
      title: t.t('timeline.title'),
      price: t.t('timeline.price'),
      odometer: t.t('timeline.odometer'),
      date: t.t('timeline.date'),
      lot: t.t('timeline.lot'),
      table: t.t('timeline.table'),
      undated: undated > 0 ? t.t('timeline.undated') : null,
    },
  };
}
