import { sumUsage } from './public.ts';
import type { Rollup } from './rollup.ts';
import type { EpisodeInput, EpisodePlan, ResultRow, SandboxRef, TurnOutcome } from './types.ts';

/** docs/design.md section 4: the episode's row, from its turns and roll-up. */
export function buildRow(args: {
  input: EpisodeInput; plan: EpisodePlan | undefined; turns: TurnOutcome[]; result: Rollup; stoppedAfter: string | null;
  sandbox: SandboxRef | undefined; host: string | null; workflowId: string; runId: string;
}): ResultRow {
  const { input, plan, turns, result } = args;
  const last = turns[turns.length - 1];
  const text = last?.response_text ?? '';
  const timings: Record<string, number> = {};
  for (const t of turns) for (const [phase, sec] of Object.entries(t.timings)) timings[phase] = (timings[phase] ?? 0) + sec;
  const usage = sumUsage(turns.flatMap((t) => (t.usage ? [t.usage] : [])));
  const training = [...turns].reverse().find((t) => t.training)?.training;
  const notes = [...new Set(turns.flatMap((t) => t.notes ?? []))];
  return {
    task_id: input.taskId,
    repeat: input.repeat,
    attempt: input.attempt,
    reward: result.masked ? null : result.reward,
    verifier_rewards: result.verifier_rewards,
    ...(result.reward_components ? { reward_components: result.reward_components } : {}),
    failure_kind: result.failure_kind,
    failure_reason: result.failure_reason,
    mask_sample: result.masked,
    turns: turns.map((t) => ({ step: t.step, reward: t.reward, verifier_rewards: t.verifier_rewards, failure_kind: t.failure_kind, ...(t.usage ? { usage: t.usage } : {}) })),
    stopped_after_turn: args.stoppedAfter,
    response: { output: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text }] }] },
    response_text: text,
    verifier_mode: plan?.verifierMode ?? null,
    digest: plan?.digest ?? input.digest,
    timings,
    workflow_id: args.workflowId,
    run_id: args.runId,
    host: args.host,
    logs_dir: args.sandbox?.logsDir ?? null,
    ...(usage ? { usage } : {}),
    ...(training ? { training } : {}),
    ...(notes.length > 0 ? { notes } : {}),
  };
}
