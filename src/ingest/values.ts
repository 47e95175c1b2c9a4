/**
 * Small value conversions shared by the feed formats. Each returns the converted value, null for
 * "unknown", or a FieldProblem saying why the text cannot be the value: the record is then skipped
 * with that reason, never loaded with a guess.
 */
export interface FieldProblem {
  problem: string;
}

export const isProblem = (value: unknown): value is FieldProblem =>
  typeof value === 'object' && value !== null && 'problem' in value;

const NEEDS_COLLAPSE = /\s\s|[\t\n\r\f\v\u00a0\u2000-\u200b\u2028\u2029\u3000\ufeff]/;

/** Trimmed, inner runs of white space collapsed ("4.6L  8" -> "4.6L 8"); blank is null. */
export function cleanText(value: string | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  let text = value.trim();
  // Most values are clean already: a test is cheaper than rebuilding every string.
  if (NEEDS_COLLAPSE.test(text)) text = text.replace(/\s+/g, ' ');
  return text === '' ? null : text;
}

/**
 * A non-negative amount or reading written as a decimal ("172691.0", "12,563", "$9,554.00"),
 * rounded to a whole number: prices are whole dollars and odometers whole miles. Blank is null.
 */
export function wholeNumber(value: string | number | null | undefined): number | null | FieldProblem {
  if (value === null || value === undefined) return null;
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value < 0) return { problem: `must be a number of 0 or more; got ${value}` };
    return Math.round(value);
  }
  const text = value.trim();
  if (text === '') return null;
  const digits = text.replace(/^\$/, '').replace(/,(?=\d{3}(?:\D|$))/g, '');
  if (!/^\+?(?:\d+(?:\.\d*)?|\.\d+)$/.test(digits)) return { problem: `must be a number of 0 or more; got ${JSON.stringify(value)}` };
  return Math.round(Number(digits));
}

/** wholeNumber, with 0 read as unknown: feeds write 0 where they have no figure. */
export function wholeNumberOrUnknown(value: string | number | null | undefined): number | null | FieldProblem {
  const number = wholeNumber(value);
  return number === 0 ? null : number;
}

/** "cs.copart.com/x.jpg" -> "https://cs.copart.com/x.jpg"; "//host/x" -> "https://host/x"; others as given. */
export function absoluteUrl(value: string | null | undefined): string | null {
  const text = cleanText(value);
  if (text === null) return null;
  if (/^[a-z][a-z0-9+.-]*:/i.test(text)) return text;
  return `https://${text.replace(/^\/+/, '')}`;
}

/** "run_and_drives" -> "Run and drives"; "ACTUAL" -> "Actual": a code-like word shown as a word. */
export function sentenceCase(value: string | null | undefined): string | null {
  const text = cleanText(value?.replace(/_/g, ' '));
  if (text === null) return null;
  const lower = text.toLowerCase();
  return lower[0]!.toUpperCase() + lower.slice(1);
}

/** "templeton" -> "Templeton", "NEW JERSEY" -> "New Jersey". */
export function titleCase(value: string | null | undefined): string | null {
  const text = cleanText(value);
  if (text === null) return null;
  return text.toLowerCase().replace(/(^|[\s\-/(])(\p{L})/gu, (_match, before: string, letter: string) => before + letter.toUpperCase());
}
