/** Inputs of the episode budget (multi-step-tasks.md § Episode time budget), all in seconds. */
export interface BudgetInput {
  turns: Array<{ agentSec: number; verifierSec: number; collectSec: number }>;
  /** Harness setup per turn (uploading solutions, transcripts). */
  setupPerTurnSec: number;
  sandboxReadySec: number;
  buildTimeoutSec: number;
  /** Image pull attempts a seed may make (image_pull_retries + 1). */
  pullAttempts: number;
  readyGraceSec: number;
  defaultEpisodeSec: number;
  enforceTaskTimeouts: boolean;
}

export type Budget =
  | { ok: true; deadlineSec: number; turnsSec: number; nominalSec: number; worstSec: number; warning: string | null }
  | { ok: false; reason: string; turnsSec: number; nominalSec: number; worstSec: number };

/**
 * Three figures: what the turns need once the sandbox is ready, the nominal episode (one ready
 * timeout and the overlay budget before that) and the worst case (a ready timeout and its grace
 * per pull attempt). Enforced tasks get the larger of the default and the worst case; otherwise
 * the default is the deadline and a task whose nominal episode does not fit is refused.
 */
export function episodeBudget(b: BudgetInput): Budget {
  const turnsSec = b.turns.reduce((s, t) => s + b.setupPerTurnSec + t.agentSec + t.verifierSec + t.collectSec, 0);
  const nominalSec = turnsSec + b.sandboxReadySec + b.buildTimeoutSec;
  const worstSec = turnsSec + b.buildTimeoutSec + b.pullAttempts * (b.sandboxReadySec + b.readyGraceSec);
  const figures = `turns ${turnsSec} s, nominal ${nominalSec} s, worst case ${worstSec} s`;
  if (b.enforceTaskTimeouts) {
    const above = worstSec > b.defaultEpisodeSec;
    return {
      ok: true, turnsSec, nominalSec, worstSec,
      deadlineSec: Math.max(b.defaultEpisodeSec, worstSec),
      warning: above ? `the episode budget follows the task's worst case above default_timeout_seconds (${b.defaultEpisodeSec} s): ${figures}` : null,
    };
  }
  if (nominalSec > b.defaultEpisodeSec) {
    return {
      ok: false, turnsSec, nominalSec, worstSec,
      reason: `the task needs ${nominalSec} s (nominal; ${worstSec} s worst case) but [episode] default_timeout_seconds is ${b.defaultEpisodeSec} s with enforce_task_timeouts = false: raise default_timeout_seconds to at least ${nominalSec} (${worstSec} to cover a retried seed) or set enforce_task_timeouts = true`,
    };
  }
  return {
    ok: true, turnsSec, nominalSec, worstSec, deadlineSec: b.defaultEpisodeSec,
    warning: worstSec > b.defaultEpisodeSec ? `an episode whose seed retries its image pulls may run past default_timeout_seconds (${b.defaultEpisodeSec} s): ${figures}` : null,
  };
}
