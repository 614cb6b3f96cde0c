import type { Command } from 'commander';
import { temporalAddress } from '../server/config.ts';
import { runWorkers } from '../worker.ts';

export function registerWorker(program: Command): void {
  program.command('worker').description('run a Berth worker (shared queue + this host\'s sandbox queue) in the foreground')
    .action(async () => {
      const { address } = temporalAddress();
      console.log(`berth worker: polling ${address}`);
      await runWorkers({ address });
    });
}
