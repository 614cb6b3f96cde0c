import type { Command } from 'commander';
import type { SandboxProviderName } from '../config/berth-config.ts';
import { sandboxOption } from './sandbox-option.ts';
import { hostQueueSuffix, isDetachedWorker, janitorAtStart, taskQueueOverride, temporalAddress } from '../config/index.ts';
import { prepareCluster } from '../server/search-attributes.ts';
import { serverSettings } from '../config/temporal.ts';
import { runWorkers } from '../worker.ts';
import { batchJobFilesActivity } from '../client/batch-job-files.ts';

export function registerWorker(program: Command): void {
  program.command('worker').description('run a Berth worker (shared queue + this host\'s sandbox queue) in the foreground')
    .addOption(sandboxOption('the sandbox this worker\'s episodes run in; it polls that sandbox\'s shared queue (default: berth.toml [sandbox] provider, else docker)'))
    .option('--no-warm-pool', 'keep no warm pool: seed every episode fresh (else [worker].warm_pool in berth.toml, default on)')
    .action(async (o: { sandbox?: SandboxProviderName; warmPool: boolean }) => {
      const { address, embedded } = temporalAddress();
      if (!embedded && !isDetachedWorker()) {
        const { namespace } = serverSettings();
        const done = await prepareCluster(address, namespace);
        if (done.namespaceRegistered) console.log(`berth worker: registered namespace ${namespace}`);
        if (done.retentionDays) console.log(`berth worker: raised the retention of namespace ${namespace} to ${done.retentionDays} days`);
        if (done.added.length > 0) console.log(`berth worker: registered search attributes ${done.added.join(', ')}`);
      }
      console.log(`berth worker: polling ${address}`);
      // Tests and multi-tenant clusters give a worker its own queues.
      await runWorkers({
        address, taskQueue: taskQueueOverride(), hostQueueSuffix: hostQueueSuffix(), ...(o.sandbox ? { sandbox: o.sandbox } : {}),
        // The test suite turns it off: its sandbox tests label containers with workflow ids that never run.
        janitor: janitorAtStart(),
        ...(o.warmPool ? {} : { warmPool: false }),
        // The batch's job files in its results store, made by the client library's code (the worker layer may not import it).
        sharedExtras: batchJobFilesActivity(),
      });
    });
}
