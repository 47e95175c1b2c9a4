import { normaliseEmail } from '../domain/account.ts';

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
