import type { Command } from 'commander';
import { loadConfig } from '../../config.ts';
import { migrateToLatest, openDatabase } from '../../storage/database.ts';

export function registerMigrateCommand(program: Command): void {
  program
    .command('migrate')
    .description('bring the database schema up to date (every other command does this too)')
    .action(async () => {
      const db = await openDatabase(loadConfig().database, { maxConnections: 1 });
      try {
        const result = await migrateToLatest(db);
        const applied = result.results ?? [];
        process.stdout.write(
          applied.length ? applied.map((r) => `applied ${r.migrationName}\n`).join('') : 'already up to date\n',
        );
      } finally {
        await db.close();
      }
    });
}
