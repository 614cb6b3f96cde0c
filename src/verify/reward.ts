// The reward-file rules of Task Folder Verifiers § "Reward files" as one pure function: given what
// verification left in /logs/verifier, the row's reward, reward keys and failure kind.
// The exit code of test.sh is deliberately not an input: it never affects the score.

import { failureReason } from './failure-reason.ts';
import { isMasked, type FailureKind } from '../outcomes/failure-kinds.ts';
import { parseRewardJson, parseRewardTxt, type RewardFileParse } from './reward-files.ts';
import { SANDBOX_LAYOUT } from '../task/index.ts';

/** What was found after test.sh ran (or failed to start). */
export interface VerifierOutput {
  /** Text of /logs/verifier/reward.json. Present, possibly '', whenever the file exists. */
  rewardJson?: string;
  /** Text of /logs/verifier/reward.txt. Present, possibly '', whenever the file exists. */
  rewardTxt?: string;
  /** test.sh ran past its timeout (`timeout` killed it, or the exec's own deadline fired). */
  timedOut: boolean;
  /**
   * test.sh never started, so the row is masked. `kind` defaults to verifier_error (bash or timeout missing,
   * exec refused); Task Folder Verifiers § How the verifier runs masks a missing tar, gzip or find as
   * provider_unavailable instead.
   */
  startFailed?: { reason: string; kind?: 'verifier_error' | 'provider_unavailable' };
  /** The end of /logs/verifier/test-stdout.txt (any length; it is cut again here). Absent: no such file. */
  testStdoutTail?: string;
}

export interface RewardOutcome {
  reward: number;
  /** Every key the reward file held (reward.txt gives `{reward}`); `{}` when there is no usable file. */
  verifier_rewards: Record<string, number>;
  /** Set when reward.json had no `reward` key and the reward is the sum of these. */
  reward_components?: Record<string, number>;
  failure_kind?: FailureKind;
  failure_reason?: string;
  /** True when the row is left out of the score (an infrastructure failure, not a verdict). */
  masked: boolean;
}

function failed(kind: FailureKind, problem: string, stdout: string | undefined): RewardOutcome {
  return {
    reward: 0,
    verifier_rewards: {},
    failure_kind: kind,
    failure_reason: failureReason(problem, stdout),
    masked: isMasked(kind),
  };
}

export function scoreVerifierOutput(out: VerifierOutput): RewardOutcome {
  if (out.startFailed) {
    const kind = out.startFailed.kind ?? 'verifier_error';
    return failed(kind, `test.sh could not start: ${out.startFailed.reason}`, out.testStdoutTail);
  }

  // reward.json wins whenever it exists, even when it is malformed.
  let parse: RewardFileParse | undefined;
  if (out.rewardJson !== undefined) parse = parseRewardJson(out.rewardJson);
  else if (out.rewardTxt !== undefined) parse = parseRewardTxt(out.rewardTxt);

  if (parse?.ok) {
    // A reward written before a timeout still stands.
    const outcome: RewardOutcome = { reward: parse.reward, verifier_rewards: parse.rewards, masked: false };
    if (parse.components) outcome.reward_components = parse.components;
    return outcome;
  }

  if (out.timedOut) {
    // A file that is unusable after a timeout was most likely cut off mid-write by the kill: the verifier
    // never finished writing a reward, so the timeout is the outcome; the file's problem is kept in the reason.
    const problem = parse ? `test.sh timed out; ${parse.problem}` : 'test.sh timed out without writing a reward';
    return failed('harbor:verifier_timeout', problem, out.testStdoutTail);
  }
  if (parse) return failed('harbor:invalid_reward', parse.problem, out.testStdoutTail);
  return failed(
    'harbor:missing_reward',
    `test.sh wrote neither ${SANDBOX_LAYOUT.rewardJson} nor ${SANDBOX_LAYOUT.rewardTxt}`,
    out.testStdoutTail,
  );
}

/** GNU `timeout` exits 124 when it stopped the command, 137 when it had to KILL it (`-k`, or `-s KILL`). */
export const TIMEOUT_EXIT_CODES: readonly number[] = [124, 137];

/**
 * For the orchestration: builds a VerifierOutput from the files copied out of /logs/verifier (name → bytes,
 * e.g. from a tar of the folder), decoding them as UTF-8. Names are as they appear in the folder.
 */
export function verifierOutputFromFiles(
  files: ReadonlyMap<string, Buffer | string>,
  run: { timedOut: boolean; startFailed?: VerifierOutput['startFailed'] },
): VerifierOutput {
  const text = (name: string): string | undefined => {
    const v = files.get(name);
    return v === undefined ? undefined : typeof v === 'string' ? v : v.toString('utf8');
  };
  const out: VerifierOutput = { timedOut: run.timedOut };
  if (run.startFailed) out.startFailed = run.startFailed;
  const json = text('reward.json');
  const txt = text('reward.txt');
  const stdout = text('test-stdout.txt');
  if (json !== undefined) out.rewardJson = json;
  if (txt !== undefined) out.rewardTxt = txt;
  if (stdout !== undefined) out.testStdoutTail = stdout;
  return out;
}
