import {
  ParentClosePolicy, allHandlersFinished, condition, continueAsNew, setHandler, startChild, workflowInfo,
} from '@temporalio/workflow';
import { episodeWorkflow } from './episode.ts';
import { episodesOf } from './episodes.ts';
import { episodeStartOptions } from './start-options.ts';
import { episodeDoneSignal, progressQuery, type EpisodeDone } from './signals.ts';
import type { BatchInput, BatchProgress } from './types.ts';

/** What a batch carries across continue-as-new: a cursor, the ids still running, and counters. */
export interface BatchCarry {
  next: number;
  running: string[];
  progress: BatchProgress;
}

export function countDone(progress: BatchProgress, done: EpisodeDone): void {
  progress.done++;
  progress.running--;
  if (done.outcome === 'scored') {
    progress.scored++;
    progress.rewardSum += done.reward ?? 0;
  } else if (done.outcome === 'masked') progress.masked++;
  else progress.failed++;
}

/**
 * Runs every (task, repeat) as a child episode, at most `concurrency` at a time. Children outlive a
 * continue-as-new (ABANDON) and report completion by signal, so the batch keeps counters, not rows.
 */
export async function batchWorkflow(batch: BatchInput, carry?: BatchCarry): Promise<BatchProgress> {
  const episodes = episodesOf(batch);
  const progress: BatchProgress = carry?.progress ?? { total: episodes.length, done: 0, running: 0, scored: 0, masked: 0, failed: 0, rewardSum: 0 };
  const running = new Set(carry?.running ?? []);
  let next = carry?.next ?? 0;
  let startedThisRun = 0;
  setHandler(progressQuery, () => progress);
  setHandler(episodeDoneSignal, (done) => {
    if (!running.delete(done.workflowId)) return;
    countDone(progress, done);
  });
  const limit = batch.continueAsNewAfter ?? 500;
  while (next < episodes.length || running.size > 0) {
    while (next < episodes.length && running.size < Math.max(1, batch.concurrency)) {
      const opts = episodeStartOptions(episodes[next]!);
      await startChild(episodeWorkflow, { ...opts, parentClosePolicy: ParentClosePolicy.ABANDON });
      running.add(opts.workflowId);
      progress.running++;
      next++;
      startedThisRun++;
    }
    if (startedThisRun >= limit || workflowInfo().continueAsNewSuggested) {
      await condition(allHandlersFinished);
      await continueAsNew<typeof batchWorkflow>(batch, { next, running: [...running], progress });
    }
    const before = progress.done;
    await condition(() => progress.done > before);
  }
  return progress;
}
