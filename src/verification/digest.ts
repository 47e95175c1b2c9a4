import { createHash } from 'node:crypto';

/** Hex digits of the digest a report page and PDF show: 64 bits, enough to tell two payloads apart by eye. */
export const SHORT_DIGEST_LENGTH = 16;

/** The first 16 hex digits of the SHA-256 of the signed payload (the UTF-8 bytes of the Report JSON). */
export function shortDigest(payload: string): string {
  return createHash('sha256').update(payload, 'utf8').digest('hex').slice(0, SHORT_DIGEST_LENGTH);
}
