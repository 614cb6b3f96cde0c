// A dataset as the commands that run it load it: berth.toml's image aliases (then the caller's) and loader options
// applied, each refused task as a skipped.json entry.
import { resolve } from 'node:path';
import { loadBerthConfig, loaderOptions } from '../config/berth-config.ts';
import { loadDataset, toSkippedEntry, type LoadedDataset, type Task } from '../task/index.ts';
import type { SkippedEntry } from './results.ts';
import { withValidFields } from './task-data.ts';

/** The loader's refusal of a whole dataset (its dataset.toml, an agent outside allowed_agents), and --image-alias's parser. */
export { DatasetRefusal, parseImageAliases } from '../task/index.ts';

export interface DatasetToRun {
  root: string;
  tasks: Task[];
  /** The dataset's settings (dataset.toml), as the loader read them. */
  settings: LoadedDataset['settings'];
  refused: SkippedEntry[];
  imageAliases: Record<string, string>;
  /** berth.toml [episode].separate_verifier_for_artifacts. */
  separateVerifierForArtifacts: boolean;
}

/** Loads the dataset (loader warnings dropped); throws a DatasetRefusal for dataset-level problems. */
export async function loadDatasetToRun(dataset: string, opts: { agent?: string; imageAliases?: Record<string, string>; taskDataImage?: string } = {}): Promise<DatasetToRun> {
  const config = loadBerthConfig();
  const imageAliases = { ...config.config.images.aliases, ...(opts.imageAliases ?? {}) };
  const loader = loaderOptions(config);
  const loaded = await withValidFields(await loadDataset(resolve(dataset), {
    ...(opts.agent !== undefined ? { agent: opts.agent } : {}), imageAliases, ...loader, logger: { warn: () => undefined },
  }), opts.taskDataImage !== undefined ? { image: opts.taskDataImage } : {});
  return {
    root: loaded.root, tasks: loaded.tasks, settings: loaded.settings, refused: loaded.refused.map(toSkippedEntry), imageAliases,
    separateVerifierForArtifacts: loader.separateVerifierForArtifacts === true,
  };
}
