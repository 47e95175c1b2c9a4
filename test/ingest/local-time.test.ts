import { describe, expect, it } from 'vitest';
import { isKnownZone, localToUtcIso } from '../../src/ingest/local-time.ts';

describe('local times to UTC', () => {
  it('takes abbreviations and offsets as fixed offsets', () => {
    expect(localToUtcIso({ year: 2024, month: 1, day: 15, hour: 12, minute: 0 }, 'PDT')).toBe('2024-01-15T19:00:00.000Z');
    expect(localToUtcIso({ year: 2024, month: 1, day: 15, hour: 12, minute: 0 }, '+05:30')).toBe('2024-01-15T06:30:00.000Z');
    expect(localToUtcIso({ year: 2024, month: 1, day: 15, hour: 12, minute: 0 }, 'UTC-3')).toBe('2024-01-15T15:00:00.000Z');
  });

  it('takes IANA names with their daylight saving time', () => {
    expect(localToUtcIso({ year: 2024, month: 1, day: 15, hour: 12, minute: 0 }, 'America/New_York')).toBe('2024-01-15T17:00:00.000Z');
    expect(localToUtcIso({ year: 2024, month: 7, day: 15, hour: 12, minute: 0 }, 'America/New_York')).toBe('2024-07-15T16:00:00.000Z');
    expect(localToUtcIso({ year: 2024, month: 3, day: 31, hour: 3, minute: 30 }, 'Europe/Berlin')).toBe('2024-03-31T01:30:00.000Z');
  });

  it('refuses impossible dates and unknown zones', () => {
    expect(localToUtcIso({ year: 2023, month: 2, day: 29, hour: 0, minute: 0 }, 'UTC')).toEqual({ problem: 'is not a real date and time' });
    expect(localToUtcIso({ year: 2024, month: 1, day: 1, hour: 0, minute: 0 }, 'Mars/Olympus')).toEqual({ problem: 'has an unknown time zone "Mars/Olympus"' });
    expect(isKnownZone('CEST')).toBe(true);
    expect(isKnownZone('Europe/Paris')).toBe(true);
    expect(isKnownZone('XYZ')).toBe(false);
  });
});
