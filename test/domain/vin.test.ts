import { describe, expect, test } from 'vitest';
import { checkVin, computeCheckDigit, isNorthAmericanVin, normaliseVin } from '../../src/domain/vin.ts';

/** VINs of real vehicles. The last ones are from test/fixtures/usa-cars/usa-cars-full.csv. */
const REAL_NORTH_AMERICAN = [
  '4JGBF7BE5AA585531', // Mercedes-Benz ML, the Copart sample row
  '1HGCM82633A004352', // Honda Accord
  '2FMDK3GC4BBB02217',
  '3C4PDCGG5JT346413',
  '5XYPG4A59LG616029',
];
/** Real VINs whose check digit is 'X' (the remainder 10). */
const REAL_WITH_X = ['1GKS2GKCXHR328380', '1FTFW1EFXDFA01008', '5GAKRCKDXHJ113512', '1M8GDM9AXKP042788'];
/** Real VINs from outside North America: Japan, Korea, Mexico, Germany, the United Kingdom. */
const REAL_ELSEWHERE = ['JTEZU11F88K007763', 'KL4CJ1SB6JB688844', 'MAJ3S2GE4KC278721', 'WBA7F2C55GG415264', 'SALCP2RX0JH740860'];

describe('normaliseVin', () => {
  test('trims and upper-cases', () => {
    expect(normaliseVin('  jtezu11f88k007763\t\n')).toBe('JTEZU11F88K007763');
    expect(normaliseVin('')).toBe('');
  });
});

describe('checkVin', () => {
  test.each([...REAL_NORTH_AMERICAN, ...REAL_WITH_X, ...REAL_ELSEWHERE])('accepts the real VIN %s', (vin) => {
    expect(checkVin(vin)).toEqual({ ok: true, vin });
  });

  test('normalises before checking, as the dataset writes them: lower case with leading spaces', () => {
    expect(checkVin('  jtezu11f88k007763')).toEqual({ ok: true, vin: 'JTEZU11F88K007763' });
    expect(checkVin('1hgcm82633a004352 ')).toEqual({ ok: true, vin: '1HGCM82633A004352' });
  });

  test('an empty or blank VIN is required', () => {
    for (const input of ['', '   ', '\t']) {
      expect(checkVin(input)).toEqual({ ok: false, vin: '', errors: ['The vin field is required.'] });
    }
  });

  test.each([
    ['1Q87T3N166389', 13], // the pre-1981 VIN in the dataset
    ['1HGCM82633A00435', 16],
    ['1HGCM82633A0043521', 18],
    ['A', 1],
  ])('%s has the wrong length (%i)', (input, length) => {
    const result = checkVin(input);
    expect(result.ok).toBe(false);
    expect(result).toMatchObject({ errors: [`The vin must be exactly 17 characters; got ${length}.`] });
  });

  test.each(['I', 'O', 'Q'])('the letter %s is never used, in any region', (letter) => {
    for (const base of ['1HGCM82633A004352', 'JTEZU11F88K007763']) {
      const vin = `${base.slice(0, 12)}${letter}${base.slice(13)}`;
      const result = checkVin(vin);
      expect(result.ok).toBe(false);
      expect(result).toMatchObject({ errors: [expect.stringContaining(`characters a VIN cannot have: ${letter}`)] });
    }
    // Lower case is caught after normalisation too.
    expect(checkVin(`1hgcm82633a00435${letter.toLowerCase()}`).ok).toBe(false);
  });

  test('every forbidden character is named once', () => {
    const result = checkVin('1HG-M8*633A0O4-52');
    expect(result).toEqual({
      ok: false,
      vin: '1HG-M8*633A0O4-52',
      errors: ['The vin contains characters a VIN cannot have: -, *, O (I, O and Q are never used).'],
    });
  });

  test('a wrong check digit is refused for North American VINs, naming the expected one', () => {
    expect(checkVin('1HGCM82643A004352')).toEqual({
      ok: false,
      vin: '1HGCM82643A004352',
      errors: ['The vin check digit (position 9) is 4, but this VIN requires 3.'],
    });
    // One changed character elsewhere changes the required digit.
    expect(checkVin('1HGCM82633A004353').ok).toBe(false);
    // 5YJSA1E26HF000337: the weighted sum is 304 and 304 mod 11 = 7, so '6' is wrong.
    expect(checkVin('5YJSA1E26HF000337')).toMatchObject({ ok: false, errors: ['The vin check digit (position 9) is 6, but this VIN requires 7.'] });
  });

  test("'X' is the check digit for a remainder of 10, and nothing else stands in for it", () => {
    for (const vin of REAL_WITH_X) {
      expect(computeCheckDigit(vin)).toBe('X');
      for (const digit of ['0', '1', '9']) {
        expect(checkVin(`${vin.slice(0, 8)}${digit}${vin.slice(9)}`)).toMatchObject({ ok: false, errors: [expect.stringContaining('requires X')] });
      }
    }
  });

  test('outside North America only the structure is checked', () => {
    // Position 9 of these is not a valid North American check digit.
    expect(checkVin('WVWZZZ1JZXW000001')).toEqual({ ok: true, vin: 'WVWZZZ1JZXW000001' });
    expect(checkVin('JTEZU11F08K007763')).toEqual({ ok: true, vin: 'JTEZU11F08K007763' });
    expect(checkVin('SALCP2RX9JH740860')).toEqual({ ok: true, vin: 'SALCP2RX9JH740860' });
    // The same characters issued for North America are checked.
    expect(checkVin('1TEZU11F08K007763').ok).toBe(false);
    // Structure still applies.
    expect(checkVin('WVWZZZ1JZXW00000').ok).toBe(false);
    expect(checkVin('WVWZZZ1JZXW00000O').ok).toBe(false);
  });
});

describe('computeCheckDigit', () => {
  test('follows 49 CFR 565 on known VINs', () => {
    expect(computeCheckDigit('1HGCM82633A004352')).toBe('3');
    expect(computeCheckDigit('4JGBF7BE5AA585531')).toBe('5');
    // The digit in position 9 has weight 0: it does not feed its own computation.
    expect(computeCheckDigit('1HGCM826X3A004352')).toBe('3');
  });
});

describe('isNorthAmericanVin', () => {
  test('first character 1 to 5', () => {
    for (const first of ['1', '2', '3', '4', '5']) expect(isNorthAmericanVin(`${first}HGCM82633A004352`)).toBe(true);
    for (const first of ['6', '7', '8', '9', 'J', 'K', 'S', 'W', 'Z']) expect(isNorthAmericanVin(`${first}HGCM82633A004352`)).toBe(false);
  });
});
