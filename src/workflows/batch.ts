import {
  ParentClosePolicy, allHandlersFinished, condition, continueAsNew, getExternalWorkflowHandle, patched, proxyActivities, setHandler, startChild, workflowInfo,
} from '@temporalio/workflow';
import { episodeWorkflow } from './episode.ts';
import { JOB_FILES_EVERY_SEC, JobFilesAsItGoes } from './job-files-pace.ts';
import { concurrencyProblem, episodeStartOptions, episodesOf, type BatchControl } from './public.ts';
import { doneOf, episodeDoneSignal, pauseUpdate, progressQuery, reportBySignal, resizeUpdate, resumeUpdate, slotFreedSignal, upcomingQuery, type EpisodeDone } from './signals.ts';
import { upcomingOf } from './upcoming.ts';
import type { BatchInput, BatchJobFilesActivity, BatchProgress } from './types.ts';

const COUNT_DONE_WHILE_STARTING = 'count-done-while-starting';
/**
 * The episodes the window lets start are started together, in one workflow task, instead of one workflow task each
 * (8 episodes took 3 s only to start on a loaded machine). A batch begun before replays one at a time, as it ran.
 */
const STARTS_TOGETHER = 'batch-starts-together';
/** Starts per workflow task under STARTS_TOGETHER: a window of thousands starts in rounds, each task's commands bounded. */
const STARTS_PER_TASK = 64;
/** Running children told to signal before the batch continues as new (episode-v5 children otherwise do not). */
const HAND_OVER = 'hand-over-before-continue';

/**
 * A batch with a results store writes its job files there itself (docs/deployment.md, A results store): the episodes
 * closed so far at the start of each run after a continue-as-new, beside the episodes it starts, and every row at
 * its end. Nobody need collect it for `berth view` and `berth report` to work from the store.
 */
const JOB_FILES_IN_STORE = 'batch-job-files-in-store';
/**
 * Also while it runs, soon after episodes close (at most one write at a time, starts JOB_FILES_EVERY_SEC apart:
 * job-files-pace.ts), so a batch nobody watches shows its closed episodes in the store before its end. Its last write
 * and a continue-as-new wait for the write in flight.
 */
const JOB_FILES_AS_IT_GOES = 'batch-job-files-as-it-goes';

/** On the shared queue (registered by `berth worker`); the last one waits for every episode's row. */
const { writeBatchJobFiles } = proxyActivities<BatchJobFilesActivity>({
  startToCloseTimeout: '1 hour',
  heartbeatTimeout: '2 minutes',
  retry: { maximumAttempts: 3, initialInterval: '5 seconds' },
});

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
 * Runs every (task, repeat) as a child episode, at most `concurrency` at a time. A child of this run is counted when
 * it completes; children outlive a continue-as-new (ABANDON), and those carried into the next run (told so just
 * before it: reportBySignal) report their closing by signal, as every child did before episode-v5. The batch keeps
 * counters, not rows.
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
  // Keyed by the ids being started, each with the signal that came first, if one did.
  const starting = new Map<string, EpisodeDone | undefined>();
  // Episodes whose last verification freed their slot (slotFreedSignal) while their files go up: out of the window,
  // not yet counted. Empty in every batch whose episodes never send that signal, so those replay as they ran.
  const finishing = new Set<string>();
  const closed = (done: EpisodeDone) => {
    if (running.delete(done.workflowId) || finishing.delete(done.workflowId)) countDone(progress, done);
  };
  setHandler(slotFreedSignal, ({ workflowId }) => {
    if (!running.delete(workflowId)) return;
    finishing.add(workflowId);
    changes++;
  });
  setHandler(episodeDoneSignal, (done) => {
    if (running.has(done.workflowId) || finishing.has(done.workflowId)) closed(done);
    else if (starting.has(done.workflowId)) starting.set(done.workflowId, done);
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
  const store = batch.episodeSettings.resultsStore;
  const writesJobFiles = store !== undefined && patched(JOB_FILES_IN_STORE);
  const asItGoes = writesJobFiles && patched(JOB_FILES_AS_IT_GOES);
  // A failed write leaves the batch's outcome as it is: a client's `berth results` still writes the job's files.
  // `closed`: how many episodes the batch has counted closed (the write waits a while for the listing to show them).
  const jobFiles = (final: boolean, closed?: number): Promise<void> => writeBatchJobFiles.executeWithOptions(
    { summary: `job files to ${store}${final ? '' : ' (episodes closed so far)'}` }, [{ store: store!, batchId: batch.batchId, final, ...(closed === undefined ? {} : { closed }) }],
  ).then(() => undefined, () => undefined);
  const writtenAtStart = writesJobFiles && carry ? jobFiles(false, asItGoes ? progress.done : undefined) : Promise.resolve();
  // The last write starts once every episode has started and freed its slot: it waits for the rows still uploading,
  // so the batch closes about when its last episode does.
  const lastDue = () => next >= episodes.length && running.size === 0 && starting.size === 0;
  const pace = asItGoes ? new JobFilesAsItGoes({
    write: (closed) => jobFiles(false, closed), closed: () => progress.done, lastDue,
    everyMs: (batch.jobFilesEverySec ?? JOB_FILES_EVERY_SEC) * 1000, ...(carry ? { inFlight: writtenAtStart } : {}),
  }) : undefined;
  // Under JOB_FILES_AS_IT_GOES the last write waits for the one in flight, and none starts after it.
  const lastWrite = (): Promise<void> => (pace ? pace.stop().then(() => jobFiles(true)) : jobFiles(true));
  let writtenAtEnd: Promise<void> | undefined;
  while (next < episodes.length || running.size > 0 || finishing.size > 0) {
    // Patched together with the rule that a run stops starting at its continue-as-new limit (before, it went on while
    // the window had room, so a batch of fast episodes never continued as new and its history grew without bound).
    const together = next < episodes.length && patched(STARTS_TOGETHER);
    const room = () => !control.paused && next < episodes.length && running.size + starting.size < Math.max(1, control.concurrency);
    const starts: Promise<void>[] = [];
    while (room() && (!together || (starts.length < STARTS_PER_TASK && startedThisRun < limit))) {
      const opts = episodeStartOptions(episodes[next]!);
      const id = opts.workflowId;
      starting.set(id, undefined);
      next++;
      startedThisRun++;
      const started = startChild(episodeWorkflow, { ...opts, parentClosePolicy: ParentClosePolicy.ABANDON }).then((child) => {
        const doneWhileStarting = starting.get(id);
        starting.delete(id);
        progress.running++;
        // Counted once, by whichever comes first: its completion (episode-v5 children), or its signal (older ones).
        void child.result().then((row) => closed(doneOf(id, row)), () => closed(doneOf(id, undefined)));
        // Patched: a batch begun before the fix replays as it ran (it dropped that signal).
        if (doneWhileStarting && patched(COUNT_DONE_WHILE_STARTING)) countDone(progress, doneWhileStarting);
        else running.add(id);
      });
      if (together) starts.push(started);
      else await started;
    }
    await Promise.all(starts);
    if (startedThisRun >= limit || workflowInfo().continueAsNewSuggested) {
      // The next run counts them as running ones (told to signal their closing, below).
      for (const id of finishing) running.add(id);
      finishing.clear();
      const written = pace?.stop();
      // Patched: a run that continued before episode-v5 replays as it ran (its children all signalled).
      if (patched(HAND_OVER)) await handOver(running);
      await writtenAtStart;
      // No write runs across the continue-as-new: the next run writes at its start.
      if (pace) await Promise.all([written, writtenAtEnd]);
      await condition(allHandlersFinished);
      // Episodes that freed their slot during the waits above are carried too: the next run counts them when they say.
      await continueAsNew<typeof batchWorkflow>(batch, { next, running: [...running, ...finishing], progress, control });
    }
    // A round of starts ended with room left: the next round starts at once.
    if (together && room()) continue;
    if (writesJobFiles && !writtenAtEnd && lastDue()) writtenAtEnd = lastWrite();
    const before = progress.done;
    const seen = changes;
    await condition(() => progress.done > before || changes !== seen);
  }
  if (writesJobFiles) {
    await writtenAtStart;
    await (writtenAtEnd ?? lastWrite());
  }
  return progress;
}

/** How long the batch waits, before it continues as new, for a child that closed as it was told to signal. */
const CLOSING_WAIT = '1 minute';

/**
 * Before continuing as new: every running child is told to report its closing by signal, since the next run will not
 * see its completion. A child that closed before it could be told is counted here, from its completion (or its
 * signal); one that never says (terminated from outside) is carried, as before.
 */
async function handOver(running: Set<string>): Promise<void> {
  await Promise.all([...running].map(async (id) => {
    const told = await getExternalWorkflowHandle(id).signal(reportBySignal).then(() => true, () => false);
    if (!told) await condition(() => !running.has(id), CLOSING_WAIT);
  }));
}
