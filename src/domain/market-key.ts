/**
 * The key a make, model or damage is compared on (contract, "Market value"; docs/api.md, "What
 * counts as the same make, model and damage"): feeds write one value in several ways ("FRONT END"
 * and "Front end", "F-150" and "F150", "Citroën" and "CITROEN"), so the key keeps the letters and
 * digits alone, accents dropped, upper-cased. A value with no letter or digit has no key (null).
 * Stored beside the source value by every import, and computed the same way from a query.
 */
export function marketKey(value: string | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  let key = cache.get(value);
  if (key === undefined) {
    key = value
      .normalize('NFKD')
      .replace(/[^\p{L}\p{N}]+/gu, '')
      .toUpperCase();
    // The feeds repeat a few thousand values: the cache spares an import the work, and is bounded.
    if (cache.size >= CACHE_SIZE) cache.clear();
    cache.set(value, key);
  }
  return key === '' ? null : key;
}

const CACHE_SIZE = 20_000;
const cache = new Map<string, string>();
