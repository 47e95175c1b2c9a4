import { describe, expect, it } from 'vitest';
import { isKnownZone, localToUtcIso } from '../../src/ingest/local-time.ts';
import { absoluteUrl, cleanText, sentenceCase, titleCase, wholeNumber, wholeNumberOrUnknown } from '../../src/ingest/values.ts';

describe('value conversions of the feed formats', () => {
  it('cleans text: trims, collapses inner white space, blank is unknown', () => {
    expect(cleanText('  4.6L  8 ')).toBe('4.6L 8');
    expect(cleanText('a\tb\u00a0c')).toBe('a b c');
    expect(cleanText('   ')).toBeNull();
    expect(cleanText(undefined)).toBeNull();
  });

  it('reads whole numbers from feed decimals, and says when a text is not one', () => {
    expect(['172691.0', '12,563', '$9,554.00', '1,234,567.5', ' 7 ', '.5'].map(wholeNumber)).toEqual([172691, 12563, 9554, 1234568, 7, 1]);
    expect(wholeNumber('')).toBeNull();
    expect(wholeNumber('12,5')).toEqual({ problem: 'must be a number of 0 or more; got "12,5"' });
    expect(wholeNumber('-3')).toEqual({ problem: 'must be a number of 0 or more; got "-3"' });
    expect(wholeNumber('N/A')).toEqual({ problem: 'must be a number of 0 or more; got "N/A"' });
    expect(wholeNumber(Number.NaN)).toEqual({ problem: 'must be a number of 0 or more; got NaN' });
    expect(wholeNumberOrUnknown('0.0')).toBeNull();
    expect(wholeNumberOrUnknown(0)).toBeNull();
    expect(wholeNumberOrUnknown('0.4')).toBeNull(); // rounds to nothing
  });

  it('makes scheme-less URLs absolute and leaves others as given', () => {
    expect(absoluteUrl('cs.copart.com/v1/a.JPG')).toBe('https://cs.copart.com/v1/a.JPG');
    expect(absoluteUrl('//cdn.example.com/a.jpg')).toBe('https://cdn.example.com/a.jpg');
    expect(absoluteUrl('http://a.example.com/x')).toBe('http://a.example.com/x');
    expect(absoluteUrl(' ')).toBeNull();
  });

  it('writes codes as words', () => {
    expect(sentenceCase('run_and_drives')).toBe('Run and drives');
    expect(sentenceCase('NOT ACTUAL')).toBe('Not actual');
    expect(titleCase('new jersey')).toBe('New Jersey');
    expect(titleCase("o'fallon-saint louis (mo)")).toBe("O'fallon-Saint Louis (Mo)");
  });
});

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
