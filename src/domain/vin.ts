/**
 * VIN rules of the contract: trim, upper-case, exactly 17 characters of 0-9 A-H J-N P R-Z, and
 * the 49 CFR 565 check digit (position 9) when the VIN was issued for North America (first
 * character 1-5). Other regions do not use the check digit consistently, so only the structure is
 * checked there.
 */
const VIN_PATTERN = /^[0-9A-HJ-NPR-Z]{17}$/;
const TRANSLITERATION: Record<string, number> = {
  A: 1, B: 2, C: 3, D: 4, E: 5, F: 6, G: 7, H: 8,
  J: 1, K: 2, L: 3, M: 4, N: 5, P: 7, R: 9,
  S: 2, T: 3, U: 4, V: 5, W: 6, X: 7, Y: 8, Z: 9,
};
const WEIGHTS = [8, 7, 6, 5, 4, 3, 2, 10, 0, 9, 8, 7, 6, 5, 4, 3, 2];

export function normaliseVin(input: string): string {
  return input.trim().toUpperCase();
}

function charValue(char: string): number {
  return char >= '0' && char <= '9' ? char.charCodeAt(0) - 48 : (TRANSLITERATION[char] ?? 0);
}

/** The check digit a structurally valid VIN must carry at position 9 ('0'-'9' or 'X'). */
export function computeCheckDigit(vin: string): string {
  let sum = 0;
  for (let i = 0; i < 17; i++) sum += charValue(vin[i]!) * WEIGHTS[i]!;
  const remainder = sum % 11;
  return remainder === 10 ? 'X' : String(remainder);
}

export function isNorthAmericanVin(vin: string): boolean {
  return vin[0]! >= '1' && vin[0]! <= '5';
}

export type VinCheck = { ok: true; vin: string } | { ok: false; vin: string; errors: string[] };

/** Normalises and validates; the messages are what a customer sees under errors.vin. */
export function checkVin(input: string): VinCheck {
  const vin = normaliseVin(input);
  if (vin.length === 0) return { ok: false, vin, errors: ['The vin field is required.'] };
  if (vin.length !== 17) {
    return { ok: false, vin, errors: [`The vin must be exactly 17 characters; got ${vin.length}.`] };
  }
  if (!VIN_PATTERN.test(vin)) {
    const bad = [...new Set([...vin].filter((c) => !/[0-9A-HJ-NPR-Z]/.test(c)))];
    return {
      ok: false,
      vin,
      errors: [`The vin contains characters a VIN cannot have: ${bad.join(', ')} (I, O and Q are never used).`],
    };
  }
  if (isNorthAmericanVin(vin)) {
    const expected = computeCheckDigit(vin);
    if (vin[8] !== expected) {
      return {
        ok: false,
        vin,
        errors: [`The vin check digit (position 9) is ${vin[8]}, but this VIN requires ${expected}.`],
      };
    }
  }
  return { ok: true, vin };
}
