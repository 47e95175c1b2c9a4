import { describe, expect, test } from 'vitest';
import { addMonthsClamped, billingPeriodAt } from '../../src/limits/billing-period.ts';

const d = (iso: string) => new Date(iso);
const iso = (date: Date) => date.toISOString();
const period = (anchor: string, now: string) => {
  const p = billingPeriodAt(d(anchor), d(now));
  return [iso(p.start), iso(p.end)];
};

describe('billingPeriodAt', () => {
  test('the first period starts at the anchor itself', () => {
    expect(period('2025-03-10T08:15:00.000Z', '2025-03-10T08:15:00.000Z')).toEqual(['2025-03-10T08:15:00.000Z', '2025-04-10T08:15:00.000Z']);
  });

  test('a start on Jan 31 resets on Feb 28, then Mar 31, Apr 30, May 31', () => {
    const anchor = '2025-01-31T10:20:30.456Z';
    expect(period(anchor, '2025-02-15T00:00:00.000Z')).toEqual(['2025-01-31T10:20:30.456Z', '2025-02-28T10:20:30.456Z']);
    expect(period(anchor, '2025-03-15T00:00:00.000Z')).toEqual(['2025-02-28T10:20:30.456Z', '2025-03-31T10:20:30.456Z']);
    expect(period(anchor, '2025-04-15T00:00:00.000Z')).toEqual(['2025-03-31T10:20:30.456Z', '2025-04-30T10:20:30.456Z']);
    expect(period(anchor, '2025-05-15T00:00:00.000Z')).toEqual(['2025-04-30T10:20:30.456Z', '2025-05-31T10:20:30.456Z']);
  });

  test('in a leap year February ends the period on the 29th', () => {
    expect(period('2024-01-31T00:00:00.000Z', '2024-02-10T00:00:00.000Z')).toEqual(['2024-01-31T00:00:00.000Z', '2024-02-29T00:00:00.000Z']);
    expect(period('2024-01-31T00:00:00.000Z', '2024-03-01T00:00:00.000Z')).toEqual(['2024-02-29T00:00:00.000Z', '2024-03-31T00:00:00.000Z']);
    // A start on Feb 29 comes back to the 28th in other years and to the 29th in the next leap year.
    expect(period('2024-02-29T12:00:00.000Z', '2025-02-28T13:00:00.000Z')).toEqual(['2025-02-28T12:00:00.000Z', '2025-03-29T12:00:00.000Z']);
    expect(period('2024-02-29T12:00:00.000Z', '2028-02-29T12:00:00.000Z')).toEqual(['2028-02-29T12:00:00.000Z', '2028-03-29T12:00:00.000Z']);
  });

  test('a start on the 30th resets on Feb 28 and is back on the 30th in March', () => {
    const anchor = '2025-01-30T09:00:00.000Z';
    expect(period(anchor, '2025-02-28T09:00:00.000Z')).toEqual(['2025-02-28T09:00:00.000Z', '2025-03-30T09:00:00.000Z']);
    expect(period(anchor, '2025-03-29T23:59:59.999Z')).toEqual(['2025-02-28T09:00:00.000Z', '2025-03-30T09:00:00.000Z']);
    expect(period(anchor, '2025-03-30T09:00:00.000Z')).toEqual(['2025-03-30T09:00:00.000Z', '2025-04-30T09:00:00.000Z']);
  });

  test('periods roll over from December into January of the next year', () => {
    expect(period('2024-12-15T23:00:00.000Z', '2025-01-10T00:00:00.000Z')).toEqual(['2024-12-15T23:00:00.000Z', '2025-01-15T23:00:00.000Z']);
    expect(period('2024-12-31T06:00:00.000Z', '2025-01-31T05:59:59.999Z')).toEqual(['2024-12-31T06:00:00.000Z', '2025-01-31T06:00:00.000Z']);
    expect(period('2024-12-31T06:00:00.000Z', '2025-02-01T00:00:00.000Z')).toEqual(['2025-01-31T06:00:00.000Z', '2025-02-28T06:00:00.000Z']);
    expect(period('2024-11-30T00:00:00.000Z', '2025-01-05T00:00:00.000Z')).toEqual(['2024-12-30T00:00:00.000Z', '2025-01-30T00:00:00.000Z']);
  });

  test('the time of day of the start is kept; before it on the reset day, the old period runs on', () => {
    const anchor = '2025-01-31T10:00:00.000Z';
    expect(period(anchor, '2025-02-28T09:59:59.999Z')).toEqual(['2025-01-31T10:00:00.000Z', '2025-02-28T10:00:00.000Z']);
    expect(period(anchor, '2025-03-31T09:00:00.000Z')).toEqual(['2025-02-28T10:00:00.000Z', '2025-03-31T10:00:00.000Z']);
  });

  test('now exactly at a boundary belongs to the new period', () => {
    const anchor = d('2025-05-20T14:30:15.250Z');
    const boundary = d('2025-06-20T14:30:15.250Z');
    expect(billingPeriodAt(anchor, boundary).start).toEqual(boundary);
    expect(billingPeriodAt(anchor, new Date(boundary.getTime() - 1)).end).toEqual(boundary);
  });

  test('years later the period is still computed from the anchor', () => {
    expect(period('2023-05-31T00:00:00.000Z', '2025-06-30T00:00:00.000Z')).toEqual(['2025-06-30T00:00:00.000Z', '2025-07-31T00:00:00.000Z']);
    expect(period('2023-05-31T00:00:00.000Z', '2025-06-29T23:59:59.999Z')).toEqual(['2025-05-31T00:00:00.000Z', '2025-06-30T00:00:00.000Z']);
  });

  test('now before the subscription start is an error', () => {
    expect(() => billingPeriodAt(d('2025-01-01T00:00:00.000Z'), d('2024-12-31T23:59:59.999Z'))).toThrow(RangeError);
  });

  test('for any start and any later moment: start <= now < end, on the anchor day clamped, one month long', () => {
    const DAY = 86_400_000;
    const daysIn = (year: number, month: number) => new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
    const problems: string[] = [];
    for (let i = 0; i < 366; i += 1) {
      const anchor = new Date(Date.UTC(2024, 0, 1 + i, (i * 7) % 24, (i * 13) % 60, i % 60, (i * 37) % 1000));
      for (let step = 0; step < 800; step += 37) {
        const now = new Date(anchor.getTime() + step * DAY + ((i * step * 7919) % DAY));
        const { start, end } = billingPeriodAt(anchor, now);
        const where = `anchor ${iso(anchor)}, now ${iso(now)}: [${iso(start)}, ${iso(end)})`;
        if (!(start <= now && now < end)) problems.push(`${where} does not contain now`);
        const days = (end.getTime() - start.getTime()) / DAY;
        if (days < 28 || days > 31) problems.push(`${where} lasts ${days} days`);
        const months = (end.getUTCFullYear() - start.getUTCFullYear()) * 12 + end.getUTCMonth() - start.getUTCMonth();
        if (months !== 1) problems.push(`${where} spans ${months} months`);
        for (const boundary of [start, end]) {
          const day = Math.min(anchor.getUTCDate(), daysIn(boundary.getUTCFullYear(), boundary.getUTCMonth()));
          if (boundary.getUTCDate() !== day) problems.push(`${where}: ${iso(boundary)} should be on day ${day}`);
          if (boundary.toISOString().slice(10) !== anchor.toISOString().slice(10)) problems.push(`${where}: ${iso(boundary)} lost the time of day`);
        }
      }
    }
    expect(problems).toEqual([]);
  });
});

describe('addMonthsClamped', () => {
  test('moves by whole months, clamping the day, forwards and backwards', () => {
    expect(iso(addMonthsClamped(d('2025-01-31T01:02:03.004Z'), 1))).toBe('2025-02-28T01:02:03.004Z');
    expect(iso(addMonthsClamped(d('2025-01-31T01:02:03.004Z'), 13))).toBe('2026-02-28T01:02:03.004Z');
    expect(iso(addMonthsClamped(d('2025-03-31T00:00:00.000Z'), -1))).toBe('2025-02-28T00:00:00.000Z');
    expect(iso(addMonthsClamped(d('2025-01-15T00:00:00.000Z'), -1))).toBe('2024-12-15T00:00:00.000Z');
    expect(iso(addMonthsClamped(d('2025-01-15T00:00:00.000Z'), 0))).toBe('2025-01-15T00:00:00.000Z');
  });
});
