import { CommanderError } from 'commander';
import { ConfigError } from '../config.ts';
import { CliError } from './cli-error.ts';

/** Exit codes: 0 done, 1 the command failed (message on stderr), 2 the command line is wrong. */
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

function messageOf(error: unknown): string {
  // A refused connection to a host with several addresses is an AggregateError with no message.
  if (error instanceof AggregateError && error.message === '') {
    return error.errors.map((inner: unknown) => messageOf(inner)).join('; ');
  }
  return error instanceof Error ? error.message : String(error);
}

/** Operational errors (a system call, the database) are explained by their message; bugs need their stack. */
function isOperational(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' || error instanceof AggregateError;
}

/** Prints a failure the way an operator should see it and returns the exit status for it. */
export function reportError(error: unknown): number {
  if (error instanceof CommanderError) {
    // Commander has already printed its message (or the help); only the status is left to set.
    return error.exitCode === 0 ? 0 : EXIT_USAGE;
  }
  if (error instanceof CliError) {
    process.stderr.write(`error: ${error.message}\n`);
    return error.exitCode;
  }
  if (error instanceof ConfigError) {
    process.stderr.write(`error: ${error.message}\n`);
    return EXIT_FAILURE;
  }
  if (isOperational(error)) {
    process.stderr.write(`error: ${messageOf(error)}\n`);
    return EXIT_FAILURE;
  }
  process.stderr.write(`error: unexpected failure: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  return EXIT_FAILURE;
}
