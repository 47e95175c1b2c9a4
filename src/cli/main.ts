import { Command, CommanderError } from 'commander';
import { ConfigError, loadConfig } from '../config.ts';
import { startServer } from '../server.ts';
import { migrateToLatest, openDatabase } from '../db/database.ts';

export async function main(argv: string[]): Promise<void> {
  const program = new Command('vinhistory').description('vinhistory: vehicle auction-history API').showHelpAfterError();
  program.command('serve').description('serve the HTTP API (what npm start runs)').action(async () => {
    await startServer(loadConfig());
  });
  program.command('migrate').description('bring the database schema up to date').action(async () => {
    const db = await openDatabase(loadConfig().database);
    try {
      const result = await migrateToLatest(db);
      const applied = result.results ?? [];
      console.log(applied.length ? applied.map((r) => `applied ${r.migrationName}`).join('\n') : 'already up to date');
    } finally {
      await db.close();
    }
  });
  try {
    await program.parseAsync(argv);
  } catch (error) {
    if (error instanceof ConfigError || error instanceof CommanderError) {
      console.error(error.message);
    } else {
      console.error(`error: ${(error as Error).message}`);
    }
    process.exitCode = 1;
  }
}
