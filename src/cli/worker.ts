import type { Command } from 'commander';
import { temporalAddress } from '../config/temporal.ts';
import { ensureSearchAttributes } from '../server/search-attributes.ts';
import { runWorkers } from '../worker.ts';

export function registerWorker(program: Command): void {
  program.command('worker').description('run a Berth worker (shared queue + this host\'s sandbox queue) in the foreground')
    .action(async () => {
      const { address, embedded } = temporalAddress();
      if (!embedded && !process.env.BERTH_DETACHED_WORKER) {
        const added = await ensureSearchAttributes(address);
        if (added.length > 0) console.log(`berth worker: registered search attributes ${added.join(', ')}`);
      }
      console.log(`berth worker: polling ${address}`);
      // Tests and multi-tenant clusters give a worker its own queues.
      await runWorkers({
        address, taskQueue: process.env.BERTH_TASK_QUEUE, hostQueueSuffix: process.env.BERTH_HOST_QUEUE_SUFFIX,
        // The test suite turns it off: its sandbox tests label containers with workflow ids that never run.
        janitor: process.env.BERTH_JANITOR_AT_START !== '0',
      });
    });
}
