import { formatDate, formatInteger } from '../format.ts';

const DAY_MS = 24 * 60 * 60 * 1000;
const dayLabel = new Intl.DateTimeFormat('en-US', { timeZone: 'UTC', month: 'short', day: 'numeric' });

export interface ChartBar {
  /** Position and size in the SVG's own units (viewBox 0 0 width 100). */
  x: number;
  y: number;
  width: number;
  height: number;
  count: number;
  label: string;
  state: 'past' | 'today' | 'future';
}

export interface UsageChart {
  width: number;
  bars: ChartBar[];
  /** Top of the scale, and the middle line: round numbers. */
  max: string;
  middle: string;
  firstDay: string;
  lastDay: string;
  total: string;
  busiest: { label: string; count: string } | null;
  /** The same numbers as a table, for screen readers and for anyone who prefers one. */
  rows: { label: string; count: string }[];
}

/** 1, 2, 5, 10, 20, 50, ...: the smallest of these at least `value`. */
function niceCeiling(value: number): number {
  if (value <= 1) return 1;
  const magnitude = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 2.5, 5, 10]) if (step * magnitude >= value) return step * magnitude;
  return 10 * magnitude;
}

/**
 * Searches per UTC day of the billing period, as bars for a server-rendered SVG (no script, no
 * library): the SVG holds only the bars and scales to any width; the labels are HTML around it, so
 * they stay legible on a phone.
 */
export function usageChart(periodStart: Date, periodEnd: Date, counts: { day: string; count: number }[], now: Date): UsageChart {
  const byDay = new Map(counts.map((entry) => [entry.day, entry.count]));
  const firstDay = Date.UTC(periodStart.getUTCFullYear(), periodStart.getUTCMonth(), periodStart.getUTCDate());
  const lastInstant = new Date(periodEnd.getTime() - 1);
  const lastDay = Date.UTC(lastInstant.getUTCFullYear(), lastInstant.getUTCMonth(), lastInstant.getUTCDate());
  const today = now.toISOString().slice(0, 10);
  const days: { iso: string; time: number }[] = [];
  for (let time = firstDay; time <= lastDay; time += DAY_MS) days.push({ iso: new Date(time).toISOString().slice(0, 10), time });

  const values = days.map((day) => byDay.get(day.iso) ?? 0);
  const top = niceCeiling(Math.max(0, ...values));
  const slot = 10;
  const barWidth = 7;
  const bars: ChartBar[] = days.map((day, index) => {
    const count = values[index]!;
    // A day with searches shows at least a sliver, so that one search is visible next to thousands.
    const height = count === 0 ? 0 : Math.max(1.5, (count / top) * 100);
    const label = dayLabel.format(new Date(day.time));
    return {
      x: index * slot + (slot - barWidth) / 2,
      y: 100 - height,
      width: barWidth,
      height,
      count,
      label: `${label}: ${formatInteger(count)} ${count === 1 ? 'search' : 'searches'}`,
      state: day.iso === today ? 'today' : day.iso > today ? 'future' : 'past',
    };
  });
  const total = values.reduce((sum, value) => sum + value, 0);
  const busiestIndex = values.indexOf(Math.max(...values));
  return {
    width: days.length * slot,
    bars,
    max: formatInteger(top) ?? String(top),
    middle: formatInteger(top / 2) ?? String(top / 2),
    firstDay: formatDate(new Date(firstDay).toISOString()) ?? '',
    lastDay: formatDate(new Date(lastDay).toISOString()) ?? '',
    total: formatInteger(total) ?? '0',
    busiest: total > 0 && busiestIndex >= 0 ? { label: dayLabel.format(new Date(days[busiestIndex]!.time)), count: formatInteger(values[busiestIndex]!) ?? '' } : null,
    rows: days.filter((day) => day.iso <= today).map((day, index) => ({ label: dayLabel.format(new Date(day.time)), count: formatInteger(values[index]!) ?? '0' })),
  };
}
