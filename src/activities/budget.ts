/** Inputs of the episode budget (Multi-Step Harbor Tasks § Episode time budget), all in seconds. */
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

/** What one turn's verification may spend, all in seconds (the verify activity's time limit). */
export interface VerifyTimeInput {
  /** Each [[verifier.collect]] hook's timeout_sec (never scaled). */
  collectSec: number[];
  /** test.sh's budget: the effective [verifier] (or [steps.verifier]) timeout_sec. */
  testSec: number;
  /**
   * A separate verifier: starting its sandbox (the ready timeout and its grace, a build not prepared ahead) and its
   * [verifier.environment.healthcheck]'s worst case (the image's own HEALTHCHECK falls under the ready timeout).
   */
  separate?: { startSec: number; healthcheckSec: number };
}

/** Each exec past its own budget: `timeout`'s kill grace and the host's guard on the stream (sandbox/exec.ts). */
export const EXEC_OVERHEAD_SEC = 30;
/** The phases around them: tools check, clear, uploads, copying and scoring /logs/verifier, artifacts, stops. */
export const VERIFY_PHASES_SEC = 120;

/**
 * The verify activity's start-to-close limit: every collect hook's timeout, a separate verifier's start and
 * healthcheck, and test.sh, each with its exec overhead, plus the phases around them. Shorter, a slow hook or
 * verifier start would end the activity before test.sh's own timeout, and a scored `harbor:verifier_timeout` would
 * become a retried, then masked, attempt.
 */
export function verifyTimeLimitSec(v: VerifyTimeInput): number {
  const hooks = v.collectSec.reduce((s, t) => s + t + EXEC_OVERHEAD_SEC, 0);
  const separate = v.separate ? v.separate.startSec + v.separate.healthcheckSec : 0;
  return Math.ceil(VERIFY_PHASES_SEC + hooks + separate + v.testSec + EXEC_OVERHEAD_SEC);
}

/**
 * The longest a polled healthcheck can take to fail for good (Task Folder Format § [environment],
 * healthcheck): the start period and the check running across its end, then `retries` failures `interval` apart.
 */
export function healthcheckWorstSec(hc: { interval_sec: number; timeout_sec: number; start_period_sec: number; retries: number }): number {
  return hc.start_period_sec + hc.timeout_sec + Math.max(1, hc.retries) * (hc.timeout_sec + hc.interval_sec);
}

type HealthcheckTimes = Parameters<typeof healthcheckWorstSec>[0];

/** What one seed may spend, all in seconds (the seed activity's time limit). */
export interface SeedTimeInput {
  /** The sandbox's ready timeout with its grace (twice for a Compose group: main, then its services). */
  readySec: number;
  /** An overlay's build_timeout_sec, a build not prepared ahead, a Compose group's builds. */
  buildSec: number;
  /** The healthchecks the seed polls ([environment].healthcheck), each to its worst case. */
  healthchecks: readonly HealthcheckTimes[];
}

/**
 * The seed activity's start-to-close limit. Shorter than a healthcheck's worst case, a slow service would end the
 * activity (a retried, then masked "the host did not answer") before the check fails as harbor:seed_failed with
 * its own message.
 */
export function seedTimeLimitSec(s: SeedTimeInput): number {
  return Math.ceil(s.readySec + s.buildSec + s.healthchecks.reduce((sum, hc) => sum + healthcheckWorstSec(hc) + EXEC_OVERHEAD_SEC, 0));
}
