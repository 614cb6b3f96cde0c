import { keepsVerifierReward } from '../outcomes/index.ts';
import type { TurnOutcome } from './types.ts';

/**
 * A turn judged by its verifier (Multi-Step Harbor Tasks § Reward roll-up, § Early stop): not masked, and its verifier
 * wrote a valid reward, also when the agent's model ended the turn (agent:max_tokens, ...: the kind stays on the turn).
 */
const valid = (t: TurnOutcome): boolean => !t.masked && t.reward !== null && keepsVerifierReward(t.failure_kind);

/** The episode's verdict: the same fields a turn has. */
export type Rollup = Pick<TurnOutcome, 'reward' | 'verifier_rewards' | 'reward_components' | 'failure_kind' | 'failure_reason' | 'masked'>;

/**
 * Multi-Step Harbor Tasks "Reward roll-up": `mean` averages every turn that ran (a turn with no valid
 * reward counts 0 under every key, a missing key counts 0); `final` takes the last turn that ran.
 * A masked turn masks the episode; failure fields come from the turn that ended it.
 */
export function rollUp(turns: TurnOutcome[], strategy: 'mean' | 'final'): Rollup {
  const last = turns[turns.length - 1];
  if (!last) return { reward: null, verifier_rewards: {}, failure_kind: null, failure_reason: null, masked: true };
  const failure = { failure_kind: last.failure_kind, failure_reason: last.failure_reason };
  if (turns.some((t) => t.masked)) {
    const masked = turns.find((t) => t.masked)!;
    return { reward: null, verifier_rewards: {}, failure_kind: masked.failure_kind, failure_reason: masked.failure_reason, masked: true };
  }
  if (strategy === 'final' || turns.length === 1) {
    return {
      reward: last.reward ?? 0,
      verifier_rewards: last.verifier_rewards,
      ...(last.reward_components ? { reward_components: last.reward_components } : {}),
      ...failure,
      masked: false,
    };
  }
  const reward = turns.reduce((sum, t) => sum + (valid(t) ? t.reward ?? 0 : 0), 0) / turns.length;
  const components = turns.some((t) => valid(t) && t.reward_components) ? perKeyMeans(turns, (t) => t.reward_components ?? {}) : undefined;
  return { reward, verifier_rewards: perKeyMeans(turns, (t) => t.verifier_rewards), ...(components ? { reward_components: components } : {}), ...failure, masked: false };
}

/** The mean of each key over every turn that ran: a turn lacking the key, or without a valid reward, counts 0. */
function perKeyMeans(turns: TurnOutcome[], of: (t: TurnOutcome) => Readonly<Record<string, number>>): Record<string, number> {
  const keys = new Set(turns.flatMap((t) => Object.keys(of(t))));
  const means: Record<string, number> = {};
  for (const key of keys) means[key] = turns.reduce((sum, t) => sum + (valid(t) ? of(t)[key] ?? 0 : 0), 0) / turns.length;
  return means;
}

/**
 * Multi-Step Harbor Tasks "Early stop": masked, no valid reward, or a missed min_reward gate. A number gates the turn's
 * `reward` key and a table each key it names, read from the reward file's keys as Harbor's `_min_reward_failure`
 * reads them: a key the file lacks is minus infinity, so a reward.json without `reward` (scored as the sum of its
 * components) fails a number gate.
 */
export function shouldStop(turn: TurnOutcome, gate: number | Record<string, number> | undefined): boolean {
  if (!valid(turn)) return true;
  if (gate === undefined) return false;
  const actual = (key: string): number => (Object.hasOwn(turn.verifier_rewards, key) ? turn.verifier_rewards[key]! : -Infinity);
  if (typeof gate === 'number') return actual('reward') < gate;
  return Object.entries(gate).some(([key, min]) => actual(key) < min);
}

/** What runs before 2026-12 read: a gate on `reward` took the turn's score, the sum of a reward.json's components. */
export function stoppedByScore(turn: TurnOutcome, gate: number | Record<string, number> | undefined): boolean {
  if (!valid(turn)) return true;
  if (gate === undefined) return false;
  if (typeof gate === 'number') return (turn.reward ?? -Infinity) < gate;
  return Object.entries(gate).some(([key, min]) => (key === 'reward' ? turn.reward ?? -Infinity : turn.verifier_rewards[key] ?? -Infinity) < min);
}
