// A Harbor job directory, Harbor's own or Berth's, read as Berth rows, so `berth report` and `berth view` show a Harbor
// run beside a Berth one. Harbor counts a trial without rewards as 0 in its mean: such a trial reads as a scored row
// of reward 0 whose failure kind is its exception type. A trial Berth wrote keeps what its `berth` keys say.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ResultRow } from '../../workflows/types.ts';
import type { HarborTrialResult } from './types.ts';

/** A folder Harbor's viewer takes for a job: config.json and result.json at its root. */
export const isHarborJobDir = (dir: string): boolean => existsSync(join(dir, 'config.json')) && existsSync(join(dir, 'result.json'));

type AnyTrial = Partial<HarborTrialResult> & { trial_name?: string; task_name?: string };

function readTrial(path: string): AnyTrial | null {
  try {
    const t = JSON.parse(readFileSync(path, 'utf8')) as unknown;
    return t && typeof t === 'object' ? t as AnyTrial : null;
  } catch {
    return null;
  }
}

const seconds = (t: { started_at?: string | null; finished_at?: string | null } | null | undefined): number | undefined =>
  t?.started_at && t.finished_at ? (Date.parse(t.finished_at) - Date.parse(t.started_at)) / 1000 : undefined;

function rowOf(t: AnyTrial, dir: string, repeat: number): ResultRow {
  const rewards = t.verifier_result?.rewards ?? null;
  const reward = rewards ? (rewards.reward ?? Object.values(rewards)[0] ?? 0) : null;
  const b = t.berth;
  const kind = t.exception_info?.exception_type ?? null;
  const masked = b ? b.masked : false;
  const timings: Record<string, number> = {};
  for (const [phase, timing] of [['seed', t.environment_setup], ['agent', t.agent_execution], ['verify', t.verifier]] as const) {
    const s = seconds(timing);
    if (s !== undefined) timings[phase] = s;
  }
  const steps = t.step_results ?? null;
  const turnOf = (step: string, r: Record<string, number> | null, failure: string | null) => ({
    step, reward: r ? (r.reward ?? Object.values(r)[0] ?? 0) : masked ? null : 0, verifier_rewards: r ?? {}, failure_kind: failure,
  });
  return {
    task_id: t.task_name ?? t.trial_name ?? 'unknown',
    repeat: b?.repeat ?? repeat,
    attempt: b?.attempt ?? 1,
    reward: masked ? null : (reward ?? 0),
    verifier_rewards: rewards ?? {},
    failure_kind: b ? b.failure_kind : kind,
    failure_reason: b ? b.failure_reason : (t.exception_info?.exception_message ?? null),
    mask_sample: masked,
    turns: steps
      ? steps.map((s) => turnOf(s.step_name, s.verifier_result?.rewards ?? null, s.exception_info?.exception_type ?? null))
      : [turnOf(t.task_name ?? 'task', rewards, kind)],
    stopped_after_turn: b?.stopped_after_turn ?? null,
    response: { output: [] },
    response_text: '',
    verifier_mode: t.verifier_environment_mode ?? null,
    digest: t.task_checksum ?? '',
    timings,
    workflow_id: b?.workflow_id ?? `harbor/${t.trial_name ?? ''}`,
    run_id: b?.run_id ?? String(t.id ?? ''),
    host: b?.host ?? null,
    logs_dir: dir,
    ...(b?.regraded_from ? { regraded_from: b.regraded_from } : {}),
  };
}

/** Every trial of the job as a row (its logs folder: the trial folder); repeats numbered by start time per task. */
export function rowsOfHarborJob(jobDir: string): ResultRow[] {
  const trials = readdirSync(jobDir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(jobDir, d.name, 'result.json')))
    .map((d) => ({ dir: join(jobDir, d.name), t: readTrial(join(jobDir, d.name, 'result.json')) }))
    .filter((x): x is { dir: string; t: AnyTrial } => x.t !== null)
    .sort((a, b) => String(a.t.started_at ?? '').localeCompare(String(b.t.started_at ?? '')) || a.dir.localeCompare(b.dir));
  const seen = new Map<string, number>();
  return trials.map(({ dir, t }) => {
    const task = t.task_name ?? '';
    const repeat = (seen.get(task) ?? 0) + 1;
    seen.set(task, repeat);
    return rowOf(t, dir, repeat);
  });
}

/**
 * The job's agent and dataset as its config.json names them; Harbor leaves default values out of it (no `agents` for
 * its default, the oracle), so the agent is then the first trial's.
 */
export function harborJobLabels(jobDir: string): { agent: string | null; dataset: string | null } {
  let c: { agents?: Array<{ name?: string }>; datasets?: Array<{ path?: string; name?: string }> } = {};
  try {
    c = JSON.parse(readFileSync(join(jobDir, 'config.json'), 'utf8')) as typeof c;
  } catch { /* labels stay unknown */ }
  const ds = c.datasets?.[0];
  const firstTrial = rowsOfHarborJob(jobDir)[0]?.logs_dir;
  const trialAgent = firstTrial ? readTrial(join(firstTrial, 'result.json'))?.agent_info?.name : undefined;
  return { agent: c.agents?.[0]?.name ?? trialAgent ?? null, dataset: ds?.name ?? ds?.path?.split('/').filter(Boolean).pop() ?? null };
}
