import { randomBytes, randomUUID } from 'node:crypto';

/** Prefixed ids tell at a glance what a value is (acct_, tok_, sub_, srch_) in logs and support mail. */
export type IdPrefix = 'acct' | 'tok' | 'sub' | 'srch';

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';

/** 16 random characters of base36: about 82 bits, unique enough for row ids that are not secrets. */
export function newId(prefix: IdPrefix): string {
  const bytes = randomBytes(16);
  let out = '';
  for (const byte of bytes) out += ALPHABET[byte % 36];
  return `${prefix}_${out}`;
}

/** Report ids are UUID v4: the link is the capability, so they must not be guessable. */
export function newReportId(): string {
  return randomUUID();
}

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

export function isReportId(value: string): boolean {
  return UUID_V4.test(value);
}
