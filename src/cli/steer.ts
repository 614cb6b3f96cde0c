// `berth pause BATCH`, `berth resume BATCH`, `berth resize BATCH N`: live control of a running batch.
import type { Command } from 'commander';
import { BatchHandle } from '../client/batch.ts';
import { BatchControlError } from '../client/steer.ts';
import type { BatchProgress } from '../client/index.ts';
import { positiveInt } from './options.ts';
import { UserError, bold, printJson } from './output.ts';
import { progressLine } from './progress.ts';

async function steer(batchId: string, json: boolean | undefined, change: (h: BatchHandle) => Promise<BatchProgress>): Promise<void> {
  // Steering needs only the server: the batch's own workers answer (ensureCluster would start one on the shared queue).
  const handle = await BatchHandle.attach(batchId);
  try {
    const progress = await change(handle).catch((err: unknown) => {
      throw err instanceof BatchControlError ? new UserError(err.message) : err;
    });
    if (json) printJson({ batch_id: batchId, progress });
    else console.log(`${bold('batch')} ${batchId}\n${progressLine(progress)}`);
  } finally {
    await handle.close();
  }
}

export function registerSteer(program: Command): void {
  program.command('pause').description('start no new episode of a batch until resumed (running ones go on)')
    .argument('<batch>', 'batch id').option('--json', 'print JSON')
    .action((batchId: string, o: { json?: boolean }) => steer(batchId, o.json, (h) => h.pause()));
  program.command('resume').description('let a paused batch start episodes again')
    .argument('<batch>', 'batch id').option('--json', 'print JSON')
    .action((batchId: string, o: { json?: boolean }) => steer(batchId, o.json, (h) => h.resume()));
  program.command('resize').description('change how many episodes of a batch run at once')
    .argument('<batch>', 'batch id').argument('<n>', 'the new concurrency window', positiveInt('N'))
    .option('--json', 'print JSON')
    .action((batchId: string, n: number, o: { json?: boolean }) => steer(batchId, o.json, (h) => h.resize(n)));
}
