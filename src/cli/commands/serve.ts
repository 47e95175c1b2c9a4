import type { Command } from 'commander';
import { loadConfig } from '../../config.ts';
import { reportError } from '../report-error.ts';

export function registerServeCommand(program: Command): void {
  program
    .command('serve')
    .description('serve the HTTP API (what npm start runs); on an empty development database, loads the demo data first')
    .action(async () => {
      const config = loadConfig();
      // Loaded on demand: the web stack is most of the start-up time, and admin commands never need it.
      const { startServer } = await import('../../server.ts');
      try {
        await startServer(config);
      } catch (error) {
        // A start that failed (port taken, database down) leaves handles open (database pool, Redis);
        // end the process now, with a status that says it failed.
        process.exit(reportError(error));
      }
    });
}
