import { readFileSync } from 'node:fs';
import { Command, type OutputConfiguration } from 'commander';
import { registerAccountsCommands } from './commands/accounts.ts';
import { registerAuditCommand } from './commands/audit.ts';
import { registerDeliverCommand } from './commands/deliver.ts';
import { registerImportCommand } from './commands/import.ts';
import { registerInvoicesCommands } from './commands/invoices.ts';
import { registerLegalCommands } from './commands/legal.ts';
import { registerMediaCommands } from './commands/media.ts';
import { registerMailCommands } from './commands/mail.ts';
import { registerMigrateCommand } from './commands/migrate.ts';
import { registerOperatorTokensCommands } from './commands/operator-tokens.ts';
import { registerPlansCommands } from './commands/plans.ts';
import { registerSeedCommand } from './commands/seed.ts';
import { registerServeCommand } from './commands/serve.ts';
import { registerSubscriptionsCommands } from './commands/subscriptions.ts';
import { registerTokensCommands } from './commands/tokens.ts';
import { reportError } from './report-error.ts';
// Operations (docs/deploy.md): readiness, backups.
import { registerDoctorCommand } from './commands/doctor.ts';
import { registerBackupCommands } from './commands/backup.ts';
import { registerKeysCommands } from './commands/keys.ts';
// Feeds the server pulls itself (docs/feeds.md).
import { registerFeedsCommands } from './commands/feeds.ts';

const HELP_AFTER = `
Configuration comes from the environment, as for the server: DATA_DIR (SQLite under ./data by
default), DATABASE_URL (postgres://... to use PostgreSQL), and so on. Every command brings the
database schema up to date before it runs. Reference: docs/cli.md.

Exit status: 0 done; 1 the command failed (the reason is on stderr); 2 the command line is wrong.`;

/** `output` redirects commander's own messages (help, usage errors), for tests that parse in-process. */
export function buildProgram(options: { output?: OutputConfiguration } = {}): Command {
  // Settings made here before the sub-commands are added are inherited by all of them.
  const program = new Command('vinhistory')
    .description('vinhistory: vehicle auction-history API (server and administration)')
    .exitOverride()
    .configureOutput(options.output ?? {})
    .showHelpAfterError('(add --help for usage)')
    .addHelpText('after', HELP_AFTER);
  registerServeCommand(program);
  registerMigrateCommand(program);
  registerImportCommand(program);
  registerSeedCommand(program);
  registerPlansCommands(program);
  registerAccountsCommands(program);
  registerTokensCommands(program);
  registerSubscriptionsCommands(program);
  registerOperatorTokensCommands(program);
  registerInvoicesCommands(program);
  registerDeliverCommand(program);
  registerMediaCommands(program);
  registerMailCommands(program);
  registerLegalCommands(program);
  // The operators' audit log (customer operations: accounts, subscriptions, tokens, invoices).
  registerAuditCommand(program);
  // Operations: readiness, backups.
  // The same two levels above src/cli/ and dist/cli/.
  program.version((JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version, '-V, --version', 'print the version');
  registerDoctorCommand(program);
  registerBackupCommands(program);
  registerKeysCommands(program);
  // Feeds the server pulls itself.
  registerFeedsCommands(program);
  return program;
}

export async function main(argv: string[]): Promise<void> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
  } catch (error) {
    process.exitCode = reportError(error);
  }
}

