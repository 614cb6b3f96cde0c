// What a regrade carries: plain data shared by the regrade workflow, its activities and the client.
import type { EpisodeInput, TokenUsage } from './types.ts';

/** A regrade that cannot run (nothing kept to verify): the workflow fails, and the graded attempt stays reported. */
export const REGRADE_REFUSED = 'berth:regrade_refused';

export interface RegradeInput {
  /** The new attempt (attempt k+1) of the episode; the plan records the task's digest as it is now. */
  episode: EpisodeInput;
  /** The attempt regraded: the row's `regraded_from`, and where its logs are. */
  from: {
    workflowId: string;
    runId: string;
    /** The sandbox queue of the host that ran it: its logs and kept state are there. */
    queue: string;
    host: string | null;
    logsDir: string;
    responseText: string;
    timings: Record<string, number>;
    usage?: TokenUsage;
  };
  /** The run whose final state was kept (the agent's run, also when a regrade is regraded). */
  stateOf: { workflowId: string; runId: string };
}
