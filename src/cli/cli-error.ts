/**
 * An expected failure of a command (unknown account, duplicate plan, lines skipped): main.ts
 * prints its message alone, with no stack trace, and exits with its code.
 */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
    this.name = 'CliError';
  }
}
