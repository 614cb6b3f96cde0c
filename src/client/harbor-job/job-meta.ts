// What a Harbor job directory says of the batch as a whole: written once in config.json, read back for result.json.
import type { BatchInput } from '../../workflows/types.ts';

export interface JobMeta {
  batchId: string;
  /** The job directory (results/<batch>), absolute: Harbor's trials_dir and trial_uri name it. */
  jobDir: string;
  datasetName: string | null;
  datasetPath: string | null;
  agent: string | null;
  /** `provider/model` (--model), when the agent calls one. */
  model: string | null;
  agentArgs: Record<string, string>;
  repeats: number;
  concurrency: number;
  tasks: Array<{ taskId: string; taskPath: string }>;
  /** ISO time the batch started. */
  startedAt: string;
}

/** Harbor's ModelInfo from `provider/model` (no provider when the name has no slash). */
export function modelInfoOf(model: string | null): { name: string; provider: string | null } | null {
  if (!model) return null;
  const slash = model.indexOf('/');
  return slash > 0 ? { name: model.slice(slash + 1), provider: model.slice(0, slash) } : { name: model, provider: null };
}

/** JobStats.format_agent_evals_key: `<agent>__<model>__<dataset>`, the model left out when there is none. */
export function evalsKey(agent: string, model: string | null, dataset: string | null): string {
  const name = modelInfoOf(model)?.name;
  return name ? `${agent}__${name}__${dataset ?? 'adhoc'}` : `${agent}__${dataset ?? 'adhoc'}`;
}

export function jobMetaOf(input: BatchInput, jobDir: string, startedAt: string): JobMeta {
  return {
    batchId: input.batchId, jobDir, datasetName: input.datasetName, datasetPath: input.datasetPath, agent: input.agent,
    model: input.model ?? null, agentArgs: input.agentArgs, repeats: input.repeats, concurrency: input.concurrency,
    tasks: input.tasks.map((t) => ({ taskId: t.taskId, taskPath: t.taskPath })), startedAt,
  };
}
