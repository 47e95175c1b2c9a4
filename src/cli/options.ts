import { InvalidArgumentError } from 'commander';
import { MAX_INTEGER } from '../ingest/normalise-lot.ts';

/**
 * Option parsers for commander: each returns the parsed value or throws InvalidArgumentError,
 * which commander reports as "option '--x <n>' argument 'y' is invalid. <reason>" with exit 2.
 */
function wholeNumber(text: string, min: number, description: string): number {
  const trimmed = text.trim();
  if (!/^\+?\d+$/.test(trimmed)) throw new InvalidArgumentError(`Expected ${description}.`);
  const value = Number(trimmed);
  if (value < min) throw new InvalidArgumentError(`Expected ${description}.`);
  if (value > MAX_INTEGER) throw new InvalidArgumentError(`Expected ${description}, at most ${MAX_INTEGER}.`);
  return value;
}

export function parsePositiveInteger(text: string): number {
  return wholeNumber(text, 1, 'a positive whole number');
}

export function parseNonNegativeInteger(text: string): number {
  return wholeNumber(text, 0, 'a whole number, 0 or more');
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** Deliberately loose: the shape of an address, not RFC 5322; the mailbox is the real test. */
export function parseEmail(text: string): string {
  const email = text.trim().toLowerCase();
  if (email.length > 254 || !EMAIL.test(email)) {
    throw new InvalidArgumentError('Expected an email address such as buyer@example.com.');
  }
  return email;
}

const PLAN_CODE = /^[a-z0-9][a-z0-9_-]{0,63}$/;

export function parsePlanCode(text: string): string {
  const code = text.trim();
  if (!PLAN_CODE.test(code)) {
    throw new InvalidArgumentError('Expected a plan code: lower-case letters, digits, - and _, up to 64 characters (such as acme-enterprise).');
  }
  return code;
}

export function parseName(text: string): string {
  const name = text.trim();
  if (name.length === 0 || name.length > 100) throw new InvalidArgumentError('Expected a name of 1 to 100 characters.');
  return name;
}
