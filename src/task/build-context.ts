// What the pure builder gets besides the snapshot: the task's id, the dataset settings that apply to it, and
// what the caller knows about the run (agent, prepare's records).
import type { TaskOverride } from './schema.ts';

export interface DatasetDefaults {
  readonly num_repeats: number;
  readonly timeout_multiplier: number;
  readonly resource_multiplier: number;
}

/**
 * berth.toml [resources] (docs/design.md section 7, Config file): the operator's sandbox_resources_override. Each key it
 * names replaces the task's effective value (after the multiplier); the keys it leaves out, and GPUs, keep theirs.
 */
export interface ResourceOverride {
  readonly cpus?: number;
  readonly memory_mb?: number;
}

export interface BuildContext {
  /** The task id (folder name). */
  readonly id: string;
  readonly datasetRoot: string;
  readonly defaults: DatasetDefaults;
  readonly override?: TaskOverride;
  /** Canonical dataset settings that enter the digest, or null when none apply. */
  readonly digestSettings: unknown;
  /** The dataset root's verifier.py, if there is one. */
  readonly datasetVerifier: { readonly path: string; readonly sha256: string } | null;
  /** The dataset root holds task_data.py (the model that types task fields). */
  readonly datasetTaskDataPy?: boolean;
  readonly imageAliases?: Readonly<Record<string, string>>;
  readonly resourceOverride?: ResourceOverride;
  /** Path of dataset.toml, for messages about overrides. */
  readonly datasetFile?: string;
  readonly warn: (message: string) => void;
  readonly unknownKey: (key: string) => void;
  /**
   * Whether prepare left a record for an image the task needs (a build, or a pull/overlay base).
   * Unset, nothing is checked (listing, prepare itself); `run` passes its records.
   */
  readonly imageRecorded?: (need: ImageNeed) => boolean;
  /** The agent that will run, when known: a task seeding the agent with a transcript runs with the oracle only. */
  readonly agent?: string;
  readonly allowUnsupportedPairing?: boolean;
  /** berth.toml [episode].separate_verifier_for_artifacts (Task Folder Verifiers § Shared and separate verification). */
  readonly separateVerifierForArtifacts?: boolean;
  /** The berth.toml read, for messages about its options. */
  readonly configFile?: string;
}

/** An image a task needs from prepare (Task Folder Format § What the loader refuses, Missing images). */
export type ImageNeed =
  | { readonly kind: 'build'; readonly context: string; readonly dockerfile: string }
  | { readonly kind: 'base'; readonly ref: string };
