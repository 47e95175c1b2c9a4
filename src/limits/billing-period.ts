/**
 * Billing periods of the contract: a period starts at the subscription's start and repeats
 * monthly, in UTC. Every boundary is computed from the anchor (the subscription start), never from
 * the previous boundary, so a start on the 31st resets on the 30th of April and the 28th/29th of
 * February and returns to the 31st in May. Annual plans reset monthly too.
 */
export interface BillingPeriod {
  start: Date;
  end: Date;
}

function daysInMonth(year: number, monthIndex: number): number {
  return new Date(Date.UTC(year, monthIndex + 1, 0)).getUTCDate();
}

/** The anchor moved `months` months on, its day clamped to the target month's last day. */
export function addMonthsClamped(anchor: Date, months: number): Date {
  const totalMonths = anchor.getUTCFullYear() * 12 + anchor.getUTCMonth() + months;
  const year = Math.floor(totalMonths / 12);
  const monthIndex = totalMonths - year * 12;
  const day = Math.min(anchor.getUTCDate(), daysInMonth(year, monthIndex));
  return new Date(
    Date.UTC(
      year,
      monthIndex,
      day,
      anchor.getUTCHours(),
      anchor.getUTCMinutes(),
      anchor.getUTCSeconds(),
      anchor.getUTCMilliseconds(),
    ),
  );
}

/** The period containing `now`. Before the anchor there is no period; callers check that first. */
export function billingPeriodAt(anchor: Date, now: Date): BillingPeriod {
  if (now.getTime() < anchor.getTime()) {
    throw new RangeError('billingPeriodAt: now is before the subscription start');
  }
  let k =
    (now.getUTCFullYear() - anchor.getUTCFullYear()) * 12 + (now.getUTCMonth() - anchor.getUTCMonth());
  // The month difference is at most one too high (when now's day/time is before the anchor's).
  if (addMonthsClamped(anchor, k).getTime() > now.getTime()) k -= 1;
  return { start: addMonthsClamped(anchor, k), end: addMonthsClamped(anchor, k + 1) };
}
