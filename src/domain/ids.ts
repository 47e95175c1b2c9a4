import { randomBytes, randomFillSync, randomUUID } from 'node:crypto';

/** Prefixed ids tell at a glance what a value is (acct_, tok_, sub_, srch_) in logs and support mail. */
export type IdPrefix = 'acct' | 'tok' | 'sub' | 'srch' | 'inv' | 'optok' | 'att' | 'mail' | 'wch' | 'evt' | 'watt' | 'brd' | 'aud' | 'feed' | 'bat';

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';

/**
 * Random bytes drawn from a pool filled 4 KiB at a time: one call into the CSPRNG per 256 ids
 * instead of one per id (it showed at 1-2% of a search's CPU). The bytes are as random either way.
 */
const POOL_SIZE = 4096;
const pool = Buffer.allocUnsafe(POOL_SIZE);
let poolOffset = POOL_SIZE;

/** `length` random characters of `alphabet` (slightly biased unless its size divides 256: fine for ids). */
export function randomChars(alphabet: string, length: number): string {
  if (length > POOL_SIZE) {
    let out = '';
    for (const byte of randomBytes(length)) out += alphabet[byte % alphabet.length];
    return out;
  }
  if (poolOffset + length > POOL_SIZE) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  let out = '';
  for (let i = poolOffset, end = poolOffset + length; i < end; i++) out += alphabet[pool[i]! % alphabet.length];
  poolOffset += length;
  return out;
}

/** 16 random characters of base36: about 82 bits, unique enough for row ids that are not secrets. */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomChars(ALPHABET, 16)}`;
}

/**
 * An id that sorts by creation time: 9 base36 characters of the millisecond (good until the year
 * 5138) and 11 random ones (about 57 bits, so ids of one millisecond do not collide). For rows
 * written on every search: a random primary key puts each insert on a random page of its index,
 * and every such page is a whole page more to write into the WAL and checkpoint (4 KiB of the
 * 18 KiB a search wrote); a key that grows with time appends instead (docs/benchmarks.md,
 * "Measured choices on the search path").
 */
export function newSortableId(prefix: IdPrefix, now = Date.now()): string {
  return `${prefix}_${now.toString(36).padStart(9, '0')}${randomChars(ALPHABET, 11)}`;
}

/** Report ids are UUID v4: the link is the capability, so they must not be guessable. */
export function newReportId(): string {
  return randomUUID();
}

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

export function isReportId(value: string): boolean {
  return UUID_V4.test(value);
}
