import {
  ParentClosePolicy, defineQuery, setHandler, startChild, type ChildWorkflowHandle,
} from '@temporalio/workflow';
import { episodeWorkflow } from './episode.ts';
import {
  BERTH_AGENT, BERTH_BATCH, BERTH_DATASET, BERTH_OUTCOME, BERTH_TASK,
} from './search-attributes.ts';
import { episodeWorkflowId, type BatchInput, type BatchProgress, type EpisodeInput, type ResultRow } from './types.ts';
import { episodesOf } from './episodes.ts';

export const progressQuery = defineQuery<BatchProgress>('progress');

export function episodeStartOptions(ep: EpisodeInput) {
  return {
    workflowId: episodeWorkflowId(ep.batchId, ep.taskId, ep.repeat, ep.attempt),
    args: [ep] as [EpisodeInput],
    staticSummary: `${ep.taskId} · repeat ${ep.repeat}${ep.attempt > 1 ? ` · attempt ${ep.attempt}` : ''} · ${ep.agent}`,
    typedSearchAttributes: [
      { key: BERTH_BATCH, value: ep.batchId },
      { key: BERTH_TASK, value: ep.taskId },
      { key: BERTH_DATASET, value: ep.datasetName },
      { key: BERTH_AGENT, value: ep.agent },
      { key: BERTH_OUTCOME, value: 'running' },
    ],
  };
}

/** Runs every (task, repeat) as a child episode, at most `concurrency` at a time. */
export async function batchWorkflow(batch: BatchInput): Promise<BatchProgress> {
  const pending = episodesOf(batch);
  const progress: BatchProgress = { total: pending.length, done: 0, running: 0, scored: 0, masked: 0, failed: 0, rewardSum: 0 };
  setHandler(progressQuery, () => progress);
  const running = new Map<string, Promise<void>>();
  const track = (id: string, handle: ChildWorkflowHandle<typeof episodeWorkflow>) =>
    handle.result().then(
      (row: ResultRow) => {
        if (row.mask_sample) progress.masked++;
        else {
          progress.scored++;
          progress.rewardSum += row.reward ?? 0;
        }
      },
      () => { progress.failed++; },
    ).finally(() => {
      progress.done++;
      progress.running--;
      running.delete(id);
    });
  while (pending.length > 0 || running.size > 0) {
    while (pending.length > 0 && running.size < Math.max(1, batch.concurrency)) {
      const ep = pending.shift()!;
      const opts = episodeStartOptions(ep);
      const handle = await startChild(episodeWorkflow, { ...opts, parentClosePolicy: ParentClosePolicy.ABANDON });
      progress.running++;
      running.set(opts.workflowId, track(opts.workflowId, handle));
    }
    if (running.size > 0) await Promise.race(running.values());
  }
  return progress;
}
