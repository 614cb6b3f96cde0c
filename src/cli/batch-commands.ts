import type { Command } from 'commander';
import { BatchHandle } from '../client/batch.ts';
import { batchWorkflowId, listEpisodes } from '../client/episodes.ts';
import { connect } from '../client/connect.ts';
import { slotWaits } from '../client/slot-waits.ts';
import { batchStoreOf, storeFailures } from '../client/store-status.ts';
import { batchUiLink } from '../config/temporal.ts';
import { ensureServer } from '../server/devserver.ts';
import { ensureCluster } from './ensure.ts';
import { collect, positiveInt } from './options.ts';
import type { EpisodeSelection } from '../client/cancel-episodes.ts';
import { UserError, bold, dim, printJson, table, yellow } from './output.ts';
import { progressLine } from './progress.ts';
import { printSummary } from './run.ts';

/**
 * The shared queue a batch runs on (its workflow's): a batch of the Kubernetes sandbox needs a worker of that
 * sandbox, not the Docker one. Unknown (no such batch yet): this process's default.
 */
async function batchQueue(batchId: string): Promise<string | undefined> {
  await ensureServer();
  const { client, connection } = await connect();
  try {
    return (await client.workflow.getHandle(batchWorkflowId(batchId)).describe()).taskQueue;
  } catch {
    return undefined;
  } finally {
    await connection.close();
  }
}

/** A handle on a batch this Temporal server has (refused, with how to list them, when it has none). */
export async function withHandle<T>(batchId: string, resultsDir: string | undefined, fn: (h: BatchHandle) => Promise<T>): Promise<T> {
  const noBatch = () => new UserError(`No batch ${batchId} on this Temporal server. List batches with: npx berth status`);
  // A batch the server does not have is said so first: on a cluster no worker may poll the default queue.
  const queue = await batchQueue(batchId);
  if (queue === undefined) throw noBatch();
  await ensureCluster(queue);
  const handle = await BatchHandle.attach(batchId, { resultsDir });
  try {
    const described = await handle.client.workflow.getHandle(batchWorkflowId(batchId)).describe().catch(() => undefined);
    if (!described) throw noBatch();
    return await fn(handle);
  } finally {
    await handle.close();
  }
}

async function listBatches(json: boolean): Promise<void> {
  await ensureCluster();
  const { client, connection } = await connect();
  try {
    const rows: Array<{ batch_id: string; status: string; started: string; summary: string }> = [];
    for await (const wf of client.workflow.list({ query: 'WorkflowType = "batchWorkflow"', pageSize: 20 })) {
      rows.push({ batch_id: wf.workflowId.replace(/^berth\//, ''), status: wf.status.name, started: wf.startTime.toISOString(), summary: '' });
      if (rows.length >= 20) break;
    }
    if (json) return printJson({ batches: rows });
    if (rows.length === 0) return console.log('No batches yet. Start one with: npx berth run examples/hello');
    console.log(table(['batch', 'status', 'started'], rows.map((r) => [r.batch_id, r.status, r.started])));
  } finally {
    await connection.close();
  }
}

async function cancelNamed(h: BatchHandle, sel: EpisodeSelection, json?: boolean): Promise<void> {
  const r = await h.cancelEpisodes(sel);
  if (json) return printJson({ batch_id: h.batchId, ...r });
  const which = `${sel.taskIds.join(', ')}${sel.repeat === undefined ? '' : ` repeat ${sel.repeat}`}`;
  if (r.cancelled.length === 0) {
    const closed = r.closed.length ? ` (${r.closed.join(', ')} had already closed)` : ' (not started yet, or no such task in this batch)';
    throw new UserError(`No running episode of ${which} in batch ${h.batchId}${closed}.`);
  }
  console.log(`cancelled ${r.cancelled.join(', ')}: sandbox removed, outcome failed; the batch goes on.`);
  console.log(dim(`retry with: npx berth retry ${h.batchId} --task ${sel.taskIds[0]}${sel.repeat === undefined ? '' : ` --repeat ${sel.repeat}`}`));
}

export function registerBatchCommands(program: Command): void {
  program.command('status').description('progress of a batch (or the recent batches)')
    .argument('[batch]', 'batch id').option('--json', 'print JSON')
    .action(async (batchId: string | undefined, o: { json?: boolean }) => {
      if (!batchId) return listBatches(Boolean(o.json));
      await withHandle(batchId, undefined, async (h) => {
        const progress = await h.progress();
        const episodes = await listEpisodes(h.client, batchId);
        const waiting = await slotWaits(h.client, batchId).catch(() => []);
        const store = await batchStoreOf(h.client, batchId);
        const notStored = store ? await storeFailures(h.client, episodes) : [];
        if (o.json) {
          return printJson({ batch_id: batchId, progress, waiting_for_slots: waiting, episodes, ui: h.uiLink,
            ...(store ? { results_store: store, not_stored: notStored } : {}) });
        }
        console.log(`${bold('batch')} ${batchId}\n${progressLine(progress, waiting)}\n${dim(h.uiLink)}`);
        if (notStored.length > 0) {
          console.log(yellow(`${notStored.length} attempt(s) whose files are not in ${store} (they stay on their hosts):`));
          for (const f of notStored) console.log(yellow(`  ${f.workflow_id}: ${f.store_error}`));
        }
      });
    });

  program.command('results').description('collect the rows of a batch into its results folder')
    .argument('<batch>', 'batch id').option('--results <dir>', 'results folder (default results/<batch>)').option('--json', 'print JSON')
    .action(async (batchId: string, o: { results?: string; json?: boolean }) => {
      await withHandle(batchId, o.results, async (h) => {
        const s = await h.collect();
        if (o.json) return printJson({ batch_id: batchId, metrics: s.metrics, rows: s.rows, results: s.resultsDir });
        printSummary(s.rows, s.metrics.mean_reward, s.uiLink, s.resultsDir);
      });
    });

  program.command('retry').description('start new attempts of masked, failed or named episodes of a batch')
    .argument('<batch>', 'batch id')
    .option('--masked', 'episodes whose newest attempt was masked')
    .option('--failed', 'episodes whose workflow failed or was cancelled')
    .option('--task <id>', 'episodes of this task (repeatable)', collect)
    .option('--repeat <n>', 'with --task: only this repeat', positiveInt('--repeat'))
    .option('--results <dir>', 'results folder to rewrite (default results/<batch>)')
    .option('--json', 'print JSON')
    .action(async (batchId: string, o: { masked?: boolean; failed?: boolean; task?: string[]; repeat?: number; results?: string; json?: boolean }) => {
      if (!o.masked && !o.failed && !o.task) throw new UserError('Say which episodes to retry: --masked, --failed and/or --task ID [--repeat N]');
      if (o.repeat !== undefined && !o.task) throw new UserError('--repeat N picks a repeat of the --task ID episodes: pass --task ID too');
      await withHandle(batchId, o.results, async (h) => {
        const s = await h.retry({ masked: o.masked, failed: o.failed, taskIds: o.task, repeat: o.repeat });
        if (o.json) return printJson({ batch_id: batchId, retried: s.retried, not_retried: s.kept, metrics: s.metrics, rows: s.rows, results: s.resultsDir });
        console.log(s.retried.length ? `retried ${s.retried.length}: ${s.retried.join(', ')}` : 'nothing to retry');
        for (const k of s.kept) {
          console.log(yellow(`not retried ${k.workflowId}: ${k.failureKind} is the task's own failure, another attempt would end the same way (fix the task, then name it with --task to retry it)`));
        }
        printSummary(s.rows, s.metrics.mean_reward, s.uiLink, s.resultsDir);
      });
    });

  program.command('cancel').description('cancel a batch and its running episodes, or with --task only those episodes (their sandboxes are removed)')
    .argument('<batch>', 'batch id')
    .option('--task <id>', 'cancel only the running episodes of this task (repeatable); the batch goes on', collect)
    .option('--repeat <n>', 'with --task: only this repeat', positiveInt('--repeat'))
    .option('--json', 'print JSON')
    .action(async (batchId: string, o: { task?: string[]; repeat?: number; json?: boolean }) => {
      if (o.repeat !== undefined && !o.task) throw new UserError('--repeat N picks a repeat of the --task ID episodes: pass --task ID too');
      await withHandle(batchId, undefined, async (h) => {
        if (o.task) return cancelNamed(h, { taskIds: o.task, repeat: o.repeat }, o.json);
        const cancelled = await h.cancel();
        if (o.json) return printJson({ batch_id: batchId, cancelled });
        console.log(`cancelled batch ${batchId} and ${cancelled.length} running episode(s)\n${dim(batchUiLink(batchId))}`);
      });
    });
}
