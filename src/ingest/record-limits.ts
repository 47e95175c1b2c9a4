/**
 * How large one record of an import file may be, whatever its format: a record past a bound is
 * skipped with its reason (the rest of the file loads), and is never held or parsed whole.
 * docs/import-formats.md ("Bounds") lists these with the Lot's own field limits.
 */

/**
 * Characters in one record: a CSV row, an NDJSON line, a record of a JSON array. A canonical lot at
 * its schema's limits is about 220,000 characters (a hundred 2,048-character image URLs), a Copart
 * row 600; a megabyte leaves a vendor record with many lots its room and keeps a hostile line from
 * costing more than that in memory.
 */
export const MAX_RECORD_CHARS = 1 << 20;

/**
 * Nesting of objects and arrays in one JSON record. A canonical lot is 2 levels deep, a vendor
 * record 5; much deeper is not lot data, and tens of thousands of levels overflow the stack of
 * whatever walks the parsed value (JSON.stringify, the worker's structured clone).
 */
export const MAX_JSON_DEPTH = 64;

export const tooLongReason = (what: 'line' | 'record', chars: number) =>
  `the ${what} is longer than ${MAX_RECORD_CHARS} characters (${chars}): not one lot`;

export const TOO_DEEP_REASON = `the record is nested more than ${MAX_JSON_DEPTH} levels deep: not one lot`;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

/**
 * Whether the JSON text nests objects and arrays more than MAX_JSON_DEPTH deep, found by counting
 * brackets outside strings (strings are skipped with indexOf), before anything parses it.
 */
export function nestsTooDeep(text: string): boolean {
  // A lot has a handful of opening brackets: too few of them anywhere, in strings or not, settles
  // it at a tenth of the cost of following the strings.
  if (count(text, '{', MAX_JSON_DEPTH) + count(text, '[', MAX_JSON_DEPTH) <= MAX_JSON_DEPTH) return false;
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      let end = text.indexOf('"', i + 1);
      while (end !== -1 && isEscaped(text, end)) end = text.indexOf('"', end + 1);
      if (end === -1) return false;
      i = end;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > MAX_JSON_DEPTH) return true;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) depth--;
  }
  return false;
}

/** Whether the quote at `at` is escaped: an odd number of backslashes right before it. */
function isEscaped(text: string, at: number): boolean {
  let backslashes = 0;
  for (let i = at - 1; i >= 0 && text.charCodeAt(i) === BACKSLASH; i--) backslashes++;
  return backslashes % 2 === 1;
}

/** Occurrences of `char` in `text`, counted up to one past `max`. */
function count(text: string, char: string, max: number): number {
  let n = 0;
  for (let i = text.indexOf(char); i !== -1 && n <= max; i = text.indexOf(char, i + 1)) n++;
  return n;
}
