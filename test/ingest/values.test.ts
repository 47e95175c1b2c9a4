import { describe, expect, it } from 'vitest';
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
