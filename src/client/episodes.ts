import { WorkflowFailedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { EpisodeInput, RegradeInput, ResultRow, SandboxRef } from '../workflows/types.ts';
import { newestOf } from './newest.ts';
import { batchWorkflowId } from '../config/batch-ids.ts';

export { batchWorkflowId };

export interface EpisodeRef {
  workflowId: string;
  taskId: string;
  repeat: number;
  attempt: number;
  /** Temporal's execution status name: RUNNING, COMPLETED, FAILED, CANCELLED, TERMINATED, TIMED_OUT, … */
  status: string;
  taskQueue: string;
  /** A regrade attempt (regradeWorkflow) rather than an episode run. */
  regrade: boolean;
}

/** `berth/<batch>/<task>/<repeat>[~a<k>]` (docs/design.md section 7, Identity). */
export function parseEpisodeId(workflowId: string): { batchId: string; taskId: string; repeat: number; attempt: number } | undefined {
  const m = /^berth\/(.+)\/([^/]+)\/(\d+)(?:~a(\d+))?$/.exec(workflowId);
  if (!m) return undefined;
  return { batchId: m[1]!, taskId: m[2]!, repeat: Number(m[3]), attempt: m[4] ? Number(m[4]) : 1 };
}

/** Every episode workflow of a batch, every attempt (regrades too), from Temporal's visibility store. */
export async function listEpisodes(client: Client, batchId: string): Promise<EpisodeRef[]> {
  const out: EpisodeRef[] = [];
  const query = `BerthBatch = "${batchId}" AND (WorkflowType = "episodeWorkflow" OR WorkflowType = "regradeWorkflow")`;
  for await (const wf of client.workflow.list({ query })) {
    const id = parseEpisodeId(wf.workflowId);
    if (!id) continue;
    out.push({
      workflowId: wf.workflowId, taskId: id.taskId, repeat: id.repeat, attempt: id.attempt, status: wf.status.name, taskQueue: wf.taskQueue,
      regrade: wf.type === 'regradeWorkflow',
    });
  }
  return out;
}

const CLOSED_BADLY = new Set(['FAILED', 'CANCELLED', 'TERMINATED', 'TIMED_OUT']);

/**
 * The newest attempt of each (task, repeat): the one reported. A regrade that could not run (its workflow failed)
 * changes nothing: the attempt it regraded stays reported.
 */
export const newestEpisodes = (episodes: EpisodeRef[]): EpisodeRef[] =>
  newestOf(episodes.filter((e) => !(e.regrade && CLOSED_BADLY.has(e.status))), (e) => ({ task: e.taskId, repeat: e.repeat, attempt: e.attempt }));

/** The attempt number a new attempt of this (task, repeat) takes: past every attempt there is, failed regrades too. */
export const nextAttempt = (episodes: EpisodeRef[], e: Pick<EpisodeRef, 'taskId' | 'repeat'>): number =>
  1 + Math.max(0, ...episodes.filter((x) => x.taskId === e.taskId && x.repeat === e.repeat).map((x) => x.attempt));

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
const NOT_FOUND_PAUSE_MAX = 2000;

/** What waitForEpisode returns for an episode its batch closed without starting (a cancelled batch). */
export const NEVER_STARTED = Symbol('never started');

/**
 * The episode's row; undefined when the workflow failed, was cancelled or terminated (outcome `failed`). Waits
 * through a server restart or an episode not started yet; given `stillExpected`, an episode that does not exist
 * once that answers false never will.
 */
export async function waitForEpisode(client: Client, workflowId: string): Promise<ResultRow | undefined>;
export async function waitForEpisode(client: Client, workflowId: string, stillExpected: () => Promise<boolean>): Promise<ResultRow | undefined | typeof NEVER_STARTED>;
export async function waitForEpisode(client: Client, workflowId: string, stillExpected?: () => Promise<boolean>): Promise<ResultRow | undefined | typeof NEVER_STARTED> {
  const result = async () => withStepName(await client.workflow.getHandle<(i: EpisodeInput) => Promise<ResultRow>>(workflowId).result());
  // An episode not started yet is looked for again sooner at first, then less often (each look is a call).
  let notFoundPause = 250;
  for (;;) {
    try {
      return await result();
    } catch (err) {
      if (err instanceof WorkflowFailedError) return undefined;
      const notFound = err instanceof WorkflowNotFoundError;
      if (notFound && notFoundPause >= NOT_FOUND_PAUSE_MAX && stillExpected && !(await stillExpected().catch(() => true))) {
        // The batch closed: the episode either started just before that, or never will.
        try {
          return await result();
        } catch (again) {
          if (again instanceof WorkflowFailedError) return undefined;
          if (again instanceof WorkflowNotFoundError) return NEVER_STARTED;
        }
      }
      await pause(notFound ? notFoundPause : 2000);
      if (notFound) notFoundPause = Math.min(notFoundPause * 2, NOT_FOUND_PAUSE_MAX);
    }
  }
}

/** Episodes closed before stopped_after_turn named the step recorded the turn's number: named here, so rows agree. */
function withStepName(row: ResultRow): ResultRow {
  const stopped: unknown = row.stopped_after_turn;
  return typeof stopped === 'number' ? { ...row, stopped_after_turn: row.turns[stopped - 1]?.step ?? null } : row;
}

/** The input a workflow was started with, read from its history. */
export async function startInput<T>(client: Client, workflowId: string): Promise<T> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const started = history.events?.[0]?.workflowExecutionStartedEventAttributes;
  const payload = started?.input?.payloads?.[0];
  if (!payload) throw new Error(`episode ${workflowId} has no input in its history`);
  return client.options.loadedDataConverter.payloadConverter.fromPayload<T>(payload);
}

/** The input an episode was started with (retries reuse it); a regrade's is its episode's. */
export async function episodeInput(client: Client, workflowId: string): Promise<EpisodeInput> {
  const input = await startInput<EpisodeInput | RegradeInput>(client, workflowId);
  return 'episode' in input ? input.episode : input;
}

/**
 * Where a workflow's files are: the files queue its seed named (a cluster's workers share one sandbox queue, so the
 * worker that seeded keeps them: src/activities/files-home.ts), else the first queue other than its own that its
 * activities went to: the host that ran it (or its regrade).
 */
export async function hostQueueOf(client: Client, workflowId: string, ownQueue: string): Promise<string | null> {
  const events = (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  // A single-step episode's seed runs with its agent (seedThenAgentTurn), whose result holds the SandboxRef.
  const seeds = new Set(events.filter((ev) => ['seed', 'seedThenAgentTurn'].includes(ev.activityTaskScheduledEventAttributes?.activityType?.name ?? ''))
    .map((ev) => String(ev.eventId)));
  for (const ev of events) {
    const done = ev.activityTaskCompletedEventAttributes;
    const payload = done?.result?.payloads?.[0];
    if (!done || !payload || !seeds.has(String(done.scheduledEventId))) continue;
    const result = client.options.loadedDataConverter.payloadConverter.fromPayload<Partial<SandboxRef> & { sandbox?: Partial<SandboxRef> } | null>(payload);
    const ref = result?.sandbox ?? result;
    if (typeof ref?.filesQueue === 'string') return ref.filesQueue;
  }
  return events.map((ev) => ev.activityTaskScheduledEventAttributes?.taskQueue?.name).find((q) => q && q !== ownQueue) ?? null;
}
