import type { FieldProblem } from './values.ts';

/**
 * Local sale times to UTC. Feeds name the zone of a time with an abbreviation (Copart: "PDT",
 * "CST") or, in an operator's mapping file, an offset or an IANA name. An abbreviation names its
 * offset outright (PDT is always UTC-7), so no daylight-saving guess is involved; an IANA name is
 * resolved for the date itself through Intl.
 */
const ABBREVIATIONS: Record<string, number> = {
  UTC: 0, GMT: 0, Z: 0,
  // North America (Copart and IAAI yards; Canada's Atlantic and Newfoundland branches).
  EST: -5 * 60, EDT: -4 * 60,
  CST: -6 * 60, CDT: -5 * 60,
  MST: -7 * 60, MDT: -6 * 60,
  PST: -8 * 60, PDT: -7 * 60,
  AKST: -9 * 60, AKDT: -8 * 60,
  HST: -10 * 60, HDT: -9 * 60,
  AST: -4 * 60, ADT: -3 * 60,
  NST: -(3 * 60 + 30), NDT: -(2 * 60 + 30),
  // Copart's European sites.
  WET: 0, WEST: 60, BST: 60, CET: 60, CEST: 2 * 60, EET: 2 * 60, EEST: 3 * 60,
};

export const KNOWN_ZONE_ABBREVIATIONS = Object.keys(ABBREVIATIONS);

export interface LocalDateTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second?: number;
}

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

export function isRealDateTime(t: LocalDateTime): boolean {
  return (
    Number.isInteger(t.year) && t.year >= 1000 && t.year <= 9999 &&
    t.month >= 1 && t.month <= 12 && t.day >= 1 && t.day <= daysInMonth(t.year, t.month) &&
    t.hour >= 0 && t.hour <= 23 && t.minute >= 0 && t.minute <= 59 && (t.second ?? 0) >= 0 && (t.second ?? 0) <= 59
  );
}

const OFFSET = /^(?:UTC|GMT)?([+-])(\d{1,2})(?::?(\d{2}))?$/i;

/** Minutes east of UTC for a fixed zone (abbreviation or offset), or null when it is not one. */
export function fixedOffsetMinutes(zone: string): number | null {
  const name = zone.trim().toUpperCase();
  const known = ABBREVIATIONS[name];
  if (known !== undefined) return known;
  const match = OFFSET.exec(name);
  if (!match) return null;
  const hours = Number(match[2]);
  const minutes = Number(match[3] ?? 0);
  if (hours > 14 || minutes > 59) return null;
  return (match[1] === '-' ? -1 : 1) * (hours * 60 + minutes);
}

const formatters = new Map<string, Intl.DateTimeFormat | null>();

function ianaFormatter(zone: string): Intl.DateTimeFormat | null {
  if (!formatters.has(zone)) {
    let formatter: Intl.DateTimeFormat | null = null;
    try {
      formatter = new Intl.DateTimeFormat('en-US', {
        timeZone: zone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric',
      });
    } catch {
      formatter = null;
    }
    formatters.set(zone, formatter);
  }
  return formatters.get(zone)!;
}

/** The offset of an IANA zone at an instant, in minutes east of UTC. */
function ianaOffsetMinutes(formatter: Intl.DateTimeFormat, instant: number): number {
  const parts: Record<string, number> = {};
  for (const part of formatter.formatToParts(new Date(instant))) if (part.type !== 'literal') parts[part.type] = Number(part.value);
  const asUtc = Date.UTC(parts.year!, parts.month! - 1, parts.day, parts.hour, parts.minute, parts.second);
  return Math.round((asUtc - Math.floor(instant / 1000) * 1000) / 60_000);
}

export function isKnownZone(zone: string): boolean {
  return fixedOffsetMinutes(zone) !== null || ianaFormatter(zone.trim()) !== null;
}

/**
 * A wall-clock time in a zone, as an ISO 8601 UTC instant with milliseconds. For an IANA zone, a
 * time in the hour a daylight-saving change skips or repeats takes one of the two offsets around it.
 */
export function localToUtcIso(time: LocalDateTime, zone: string): string | FieldProblem {
  if (!isRealDateTime(time)) return { problem: 'is not a real date and time' };
  const wall = Date.UTC(time.year, time.month - 1, time.day, time.hour, time.minute, time.second ?? 0);
  let offset = fixedOffsetMinutes(zone);
  if (offset === null) {
    const formatter = ianaFormatter(zone.trim());
    if (formatter === null) return { problem: `has an unknown time zone ${JSON.stringify(zone)}` };
    // The offset at the wall time read as UTC is right except within hours of a change; a second
    // look at the corrected instant settles those.
    const first = ianaOffsetMinutes(formatter, wall);
    offset = ianaOffsetMinutes(formatter, wall - first * 60_000);
  }
  return new Date(wall - offset * 60_000).toISOString();
}
