// What a dataset loads as (`berth tasks`): each task's id, steps, verifier kind and mode, image mode and digest, and
// what is refused, with the reason.
import { loadDataset, toSkippedEntry, type SkippedEntry, type Task } from '../task/index.ts';

export interface TaskListing {
  task_id: string;
  path: string;
  multi_step: boolean;
  steps: number;
  verifier_kind: Task['verifier']['kind'];
  verifier_mode: Task['verifier']['mode'];
  image_mode: Task['image']['mode'];
  digest: string;
}

export interface TasksReport {
  tasks: TaskListing[];
  refused: SkippedEntry[];
}

export interface ListTasksOptions {
  agent?: string;
  allowUnsupportedPairing?: boolean;
  imageAliases?: Record<string, string>;
  strict?: boolean;
  /** berth.toml [episode].separate_verifier_for_artifacts, and its file. */
  separateVerifierForArtifacts?: boolean;
  configFile?: string;
  /** Receives loader warnings (unknown keys, legacy keys); default: dropped. */
  warn?: (message: string) => void;
}

/** Loads the dataset and reports it. Throws a DatasetRefusal for dataset-level problems. */
export async function listTasks(dataset: string, opts: ListTasksOptions = {}): Promise<TasksReport> {
  const loaded = await loadDataset(dataset, {
    agent: opts.agent,
    allowUnsupportedPairing: opts.allowUnsupportedPairing,
    imageAliases: opts.imageAliases,
    strict: opts.strict,
    separateVerifierForArtifacts: opts.separateVerifierForArtifacts,
    configFile: opts.configFile,
    logger: { warn: opts.warn ?? (() => {}) },
  });
  return {
    tasks: loaded.tasks.map((t) => ({
      task_id: t.id,
      path: t.path,
      multi_step: t.multi_step,
      steps: t.multi_step ? t.steps.length : 1,
      verifier_kind: t.verifier.kind,
      verifier_mode: t.verifier.mode,
      image_mode: t.image.mode,
      digest: t.digest,
    })),
    refused: loaded.refused.map(toSkippedEntry),
  };
}
