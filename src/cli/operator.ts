import { userInfo } from 'node:os';
import type { Actor, Outcome } from '../operations/operator-service.ts';
import { CliError } from './cli-error.ts';

/** The audit log's "who" for a command: the operating-system user that ran it. */
export function cliActor(): Actor {
  let user = 'unknown';
  try {
    user = userInfo().username || user;
  } catch {
    // A uid without a passwd entry (some containers): the action is still recorded.
  }
  return { name: `cli:${user}` };
}

/** An operator service's outcome, or the refusal as the command's failure (2 for a bad argument). */
export function unwrap<T>(outcome: Outcome<T>): T {
  if (outcome.kind === 'done') return outcome;
  throw new CliError(outcome.kind === 'invalid' ? `${outcome.field}: ${outcome.message}` : outcome.message, outcome.kind === 'invalid' ? 2 : 1);
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

/** The page's cursor, on stderr so that stdout stays the table alone. */
export function noteNextPage(nextCursor: string | null): void {
  if (nextCursor !== null) process.stderr.write(`more: add --cursor ${nextCursor}\n`);
}
