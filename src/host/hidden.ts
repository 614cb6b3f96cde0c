// What this worker's activities never write in clear for an episode (docs/design.md section 7 "Secrets"): its [secrets] and the
// values its environment gave [environment].env, longest first.
import { loadBerthConfig } from '../config/berth-config.ts';
import { episodeSecretValues, type Task } from '../task/index.ts';
import { secretValues } from '../verify/index.ts';

export function hiddenValuesOf(task: Task, secrets: Readonly<Record<string, string>> = loadBerthConfig().config.secrets): string[] {
  return secretValues(episodeSecretValues(task, process.env, secrets));
}
