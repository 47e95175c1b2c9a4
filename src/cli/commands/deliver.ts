import type { Command } from 'commander';
import { withDatabase } from '../database.ts';

export function registerDeliverCommand(program: Command): void {
  program
    .command('deliver')
    .description('send due webhook events, apart from the server (run serve with WEBHOOK_WORKER=false); on PostgreSQL any number may run')
    .option('--once', 'send what is due now, then exit')
    .action(async (options: { once?: boolean }) => {
      await withDatabase(async ({ services }) => {
        const worker = services.deliveryWorker;
        if (options.once) {
          let sent = 0;
          for (let batch = await worker.runOnce(); batch > 0; batch = await worker.runOnce()) sent += batch;
          process.stdout.write(`attempted ${sent} webhook deliveries\n`);
          return;
        }
        process.stderr.write(`delivering webhook events as ${worker.owner}; Ctrl-C or SIGTERM stops after the attempts in flight\n`);
        await new Promise<void>((resolve) => {
          const stop = () => {
            process.off('SIGINT', stop);
            process.off('SIGTERM', stop);
            resolve();
          };
          process.on('SIGINT', stop);
          process.on('SIGTERM', stop);
          worker.start();
        });
        await worker.stop();
        process.stderr.write('stopped: attempts in flight finished and recorded\n');
      });
    });
}
