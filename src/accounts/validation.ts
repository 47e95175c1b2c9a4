import { BUYER_LIMITS, normaliseEmail, type BuyerDetails } from '../domain/account.ts';

/** Field name -> messages, the shape the forms show next to each field. */
export type FieldErrors = Record<string, string[]>;

export const PASSWORD_MIN_LENGTH = 10;
export const PASSWORD_MAX_LENGTH = 200;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export function addError(errors: FieldErrors, field: string, message: string): void {
  (errors[field] ??= []).push(message);
}

/** The normalised address, or a message. Loose on purpose: the mailbox is the real test. */
export function checkEmail(raw: unknown): { email: string } | { error: string } {
  if (typeof raw !== 'string' || raw.trim() === '') return { error: 'Enter your email address.' };
  const email = normaliseEmail(raw);
  if (email.length > 254 || !EMAIL.test(email)) return { error: 'Enter an email address such as buyer@example.com.' };
  return { email };
}

/**
 * NIST SP 800-63B: a length rule and no composition rules; long passphrases are welcome. A password
 * that is the email address itself is refused, as the first guess of anyone who knows it.
 */
export function checkNewPassword(raw: unknown, email: string | null): string | null {
  if (typeof raw !== 'string' || raw === '') return 'Choose a password.';
  const length = [...raw].length;
  if (length < PASSWORD_MIN_LENGTH) return `Use at least ${PASSWORD_MIN_LENGTH} characters.`;
  if (length > PASSWORD_MAX_LENGTH) return `Use at most ${PASSWORD_MAX_LENGTH} characters.`;
  if (email !== null && raw.trim().toLowerCase() === email) return 'Choose a password other than your email address.';
  return null;
}

/**
 * The buyer's details from a checkout form: each optional, trimmed, bounded; the address keeps its
 * lines (at most 6), the others are one line.
 */
export function checkBuyerDetails(raw: { company: unknown; address: unknown; taxId: unknown }): { details: BuyerDetails } | { errors: FieldErrors } {
  const errors: FieldErrors = {};
  const line = (value: unknown) => (typeof value === 'string' ? value.replace(/\s+/g, ' ').trim() : '');
  const company = line(raw.company);
  const taxId = line(raw.taxId);
  const addressLines = (typeof raw.address === 'string' ? raw.address : '').split(/\r?\n/).map((part) => part.replace(/\s+/g, ' ').trim()).filter((part) => part !== '');
  const address = addressLines.join('\n');
  if ([...company].length > BUYER_LIMITS.company) addError(errors, 'company', `Use at most ${BUYER_LIMITS.company} characters.`);
  if ([...address].length > BUYER_LIMITS.address || addressLines.length > 6) addError(errors, 'address', `Use at most 6 lines and ${BUYER_LIMITS.address} characters.`);
  if ([...taxId].length > BUYER_LIMITS.taxId) addError(errors, 'tax_id', `Use at most ${BUYER_LIMITS.taxId} characters.`);
  else if (taxId !== '' && !/^[\p{L}\p{N} .\-/]+$/u.test(taxId)) addError(errors, 'tax_id', 'Use letters, digits, spaces, dots, dashes and slashes only, e.g. DE123456789.');
  if (Object.keys(errors).length > 0) return { errors };
  return { details: { company: company || null, address: address || null, taxId: taxId || null } };
}
