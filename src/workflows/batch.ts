import {
  ParentClosePolicy, allHandlersFinished, condition, continueAsNew, patched, setHandler, startChild, workflowInfo,
} from '@temporalio/workflow';
import { episodeWorkflow } from './episode.ts';
import { concurrencyProblem, episodeStartOptions, episodesOf, type BatchControl } from './public.ts';
import { episodeDoneSignal, pauseUpdate, progressQuery, resizeUpdate, resumeUpdate, upcomingQuery, type EpisodeDone } from './signals.ts';
import { upcomingOf } from './upcoming.ts';
import type { BatchInput, BatchProgress } from './types.ts';

const COUNT_DONE_WHILE_STARTING = 'count-done-while-starting';

/** What a batch carries across continue-as-new: a cursor, the ids still running, counters and its live control. */
export interface BatchCarry {
  next: number;
  running: string[];
  progress: BatchProgress;
  /** Absent in runs started before live control existed. */
  control?: BatchControl;
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
 * Updates pause it (no new episode starts; running ones go on), resume it, and resize its window.
 */
export async function batchWorkflow(batch: BatchInput, carry?: BatchCarry): Promise<BatchProgress> {
  const episodes = episodesOf(batch);
  const progress: BatchProgress = carry?.progress ?? { total: episodes.length, done: 0, running: 0, scored: 0, masked: 0, failed: 0, rewardSum: 0 };
  const running = new Set(carry?.running ?? []);
  const control: BatchControl = { paused: false, concurrency: batch.concurrency, ...carry?.control };
  let next = carry?.next ?? 0;
  let startedThisRun = 0;
  // Bumped by every update, so the wait below wakes for a resume or a larger window as it does for a closed episode.
  let changes = 0;
  const view = (): BatchProgress => ({ ...progress, ...control });
  const steer = (change: Partial<BatchControl>) => () => {
    Object.assign(control, change);
    changes++;
    return view();
  };
  setHandler(progressQuery, view);
  setHandler(upcomingQuery, () => upcomingOf(episodes, next, control.paused));
  // A child that ends before its start resolves here signals into the same activation, and signals are handled
  // before the start resolves: that signal is kept for the episode being started, or the batch would wait forever.
  let starting: string | undefined;
  let doneWhileStarting: EpisodeDone | undefined;
  setHandler(episodeDoneSignal, (done) => {
    if (running.delete(done.workflowId)) countDone(progress, done);
    else if (done.workflowId === starting) doneWhileStarting = done;
  });
  setHandler(pauseUpdate, steer({ paused: true }));
  setHandler(resumeUpdate, steer({ paused: false }));
  setHandler(resizeUpdate, (concurrency) => steer({ concurrency })(), {
    validator: (concurrency) => {
      const problem = concurrencyProblem(concurrency);
      if (problem) throw new Error(problem);
    },
  });
  const limit = batch.continueAsNewAfter ?? 500;
  while (next < episodes.length || running.size > 0) {
    while (!control.paused && next < episodes.length && running.size < Math.max(1, control.concurrency)) {
      const opts = episodeStartOptions(episodes[next]!);
      starting = opts.workflowId;
      await startChild(episodeWorkflow, { ...opts, parentClosePolicy: ParentClosePolicy.ABANDON });
      starting = undefined;
      progress.running++;
      next++;
      startedThisRun++;
      // Patched: a batch begun before the fix replays as it ran (it dropped that signal).
      if (doneWhileStarting && patched(COUNT_DONE_WHILE_STARTING)) countDone(progress, doneWhileStarting);
      else running.add(opts.workflowId);
      doneWhileStarting = undefined;
    }
    if (startedThisRun >= limit || workflowInfo().continueAsNewSuggested) {
      await condition(allHandlersFinished);
      await continueAsNew<typeof batchWorkflow>(batch, { next, running: [...running], progress, control });
    }
    const before = progress.done;
    const seen = changes;
    await condition(() => progress.done > before || changes !== seen);
  }
  return progress;
}
