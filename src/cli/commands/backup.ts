import path from 'node:path';
import type { Command } from 'commander';
import { loadConfig } from '../../config.ts';
import { backupSqlite, restoreSqlite, servingProcesses } from '../../storage/database.ts';
import { CliError } from '../cli-error.ts';

const ON_POSTGRES = 'the database is PostgreSQL (DATABASE_URL): use pg_dump and pg_restore, as docs/deploy.md shows';

/** `backup` and `restore` of the embedded SQLite database (docs/deploy.md, "Backups"). */
export function registerBackupCommands(program: Command): void {
  program
    .command('backup')
    .description('copy the SQLite database (its main file and its searches file) into new files, consistently, while the server runs (SQLite online backup)')
    .argument('<file>', 'the backup file to make (must not exist); its searches file is made beside it as <file minus .sqlite>-searches.sqlite')
    .action(async (file: string) => {
      const config = loadConfig();
      if (config.database.kind !== 'sqlite') throw new CliError(`backup: ${ON_POSTGRES}`);
      const result = await backupSqlite(config.database.file, path.resolve(file)).catch((error: unknown) => {
        throw new CliError(`backup: ${error instanceof Error ? error.message : String(error)}`);
      });
      const searches = result.searches ? `; its searches file to ${result.searches.file} (${result.searches.bytes} bytes, integrity check ok)` : '';
      process.stdout.write(`backed up ${config.database.file} to ${result.file} (${result.bytes} bytes, integrity check ok)${searches}\n`);
    });

  program
    .command('restore')
    .description('put a backup in place of the SQLite database; refused while a server runs on it (stop serve first)')
    .argument('<file>', 'a file made by vinhistory backup (its searches file beside it)')
    .action(async (file: string) => {
      const config = loadConfig();
      if (config.database.kind !== 'sqlite') throw new CliError(`restore: ${ON_POSTGRES}`);
      const servers = servingProcesses(config.database.file);
      if (servers.length > 0) {
        throw new CliError(
          `restore: refused: a server is running on ${config.database.file} (process ${servers.join(', ')}); stop it first, then restore, then start it again`,
        );
      }
      const { kept } = await restoreSqlite(path.resolve(file), config.database.file).catch((error: unknown) => {
        throw new CliError(`restore: ${error instanceof Error ? error.message : String(error)}`);
      });
      process.stdout.write(
        `restored ${config.database.file} from ${path.resolve(file)}${kept ? `; the database it replaced is kept as ${kept}` : ''}\n`,
      );
    });
}
