// The loaded task: immutable, every default filled in, dataset overrides and multipliers applied once
// (docs/design.md section 7, Effective values). Config tables keep task.toml's own key names.
import type { ComposePlan } from './compose.ts';
import type { DockerfileInstruction, RunLine } from './dockerfile.ts';

export type User = string | number;
export type NetworkMode = 'public' | 'no-network' | 'allowlist';
export type VerifierMode = 'shared' | 'separate';
export type RewardStrategy = 'mean' | 'final';

/** One phase's network (src/task/network.ts): `allowed_hosts` normalised, empty unless the mode is allowlist. */
export interface NetworkPolicy {
  readonly network_mode: NetworkMode;
  readonly allowed_hosts: readonly string[];
}

export interface Healthcheck {
  readonly command: string;
  readonly interval_sec: number;
  readonly timeout_sec: number;
  readonly start_period_sec: number;
  readonly start_interval_sec: number;
  readonly retries: number;
}

export interface McpServer {
  readonly name: string;
  readonly transport: 'sse' | 'streamable-http' | 'stdio';
  readonly url: string | null;
  readonly command: string | null;
  readonly args: readonly string[];
}

export interface Environment {
  /** After image aliases. */
  readonly docker_image: string | null;
  /** Overlay RUN budget; never scaled. */
  readonly build_timeout_sec: number;
  readonly os: 'linux';
  /** Scaled by resource_multiplier and rounded up; berth.toml [resources] replaces cpus and memory_mb it names. */
  readonly cpus: number | null;
  readonly memory_mb: number | null;
  readonly storage_mb: number | null;
  /** Never scaled. */
  readonly gpus: number | null;
  readonly gpu_types: readonly string[] | null;
  /** Raw: `${VAR}` templates are resolved at seed (see template.ts). */
  readonly env: Readonly<Record<string, string>>;
  readonly workdir: string | null;
  readonly skills_dir: string | null;
  readonly mcp_servers: readonly McpServer[];
  readonly healthcheck: Healthcheck | null;
  /** The baseline network of a sandbox started from this environment. */
  readonly network_mode: NetworkMode;
  readonly allowed_hosts: readonly string[];
}

export interface Artifact {
  readonly source: string;
  readonly destination: string | null;
  readonly service: string;
  readonly exclude: readonly string[];
}

export interface CollectHook {
  readonly command: string;
  readonly service: string;
  /** Never scaled. */
  readonly timeout_sec: number;
  readonly user: User | null;
  /** Set for a step's `[[steps.verifier.collect]]` hook: the step that declares it. */
  readonly step?: string;
}

export type ImageMode = 'prebuilt' | 'pull' | 'overlay' | 'build';

/** How the agent's sandbox image is made (Task Folder Format § Dockerfile modes). */
export interface ImagePlan {
  readonly mode: ImageMode;
  /** The reference the sandbox starts from (prebuilt, pull, overlay); null in build mode. */
  readonly image: string | null;
  /** `[environment].docker_image` after aliases, or null. */
  readonly docker_image: string | null;
  /** The Dockerfile's FROM after aliases, and as written. */
  readonly from: string | null;
  readonly from_original: string | null;
  /** Dockerfile settings that apply (pull and overlay modes; empty otherwise). */
  readonly workdir: string | null;
  readonly env: Readonly<Record<string, string>>;
  readonly user: string | null;
  readonly runs: readonly RunLine[];
  readonly instructions: readonly DockerfileInstruction[];
  readonly entrypoint_cleared: boolean;
  /** `environment/Dockerfile` when one is read, else null. */
  readonly dockerfile: string | null;
  /** Why a build is needed (build mode), or why a Dockerfile beside docker_image is ignored. */
  readonly note: string | null;
  /** A prebuilt docker_image with neither Dockerfile nor compose file: environment/'s files go to the workdir. */
  readonly upload_environment_files: boolean;
}

export type VerifierImage =
  /** `pull_policy: never` (tests/docker-compose.yaml): looked up on the engine, never pulled. */
  | { readonly kind: 'prebuilt'; readonly ref: string; readonly pull_policy?: 'never' }
  /**
   * Built from `context` (`tests`, or a step's `steps/<name>/tests`), relative to the task folder, with `dockerfile`
   * (tests/docker-compose.yaml's build.dockerfile) and `build_args`; the image is also tagged `pinned_image` (main's `image:`).
   */
  | { readonly kind: 'build'; readonly context: string; readonly dockerfile: string; readonly pinned_image: string | null; readonly build_args?: Readonly<Record<string, string>> };

export type VerifierKind = 'test_sh' | 'python' | 'none';

export interface Verifier {
  /** What grades: `tests/test.sh`, a Python module (nemo_gym.data.tasks.harbor.python_verifier), or nothing on the host. */
  readonly kind: VerifierKind;
  /** Absolute path of the grading file (test.sh or verifier.py), or null for kind `none`. */
  readonly script: string | null;
  /** True when the Python module is the task's own tests/verifier.py. */
  readonly python_in_task_tests: boolean;
  /** Absolute path of the task's tests/ folder, or null when there is none. */
  readonly tests_dir: string | null;
  readonly mode: VerifierMode;
  /** Scaled by timeout_multiplier. */
  readonly timeout_sec: number;
  readonly user: User | null;
  readonly env: Readonly<Record<string, string>>;
  readonly collect: readonly CollectHook[];
  readonly inputs: readonly string[];
  /** The network of the verifier phase (single-step): [verifier]'s own, else the baseline of the sandbox test.sh runs in. */
  readonly network_mode: NetworkMode;
  readonly allowed_hosts: readonly string[];
  /** Separate mode: the effective verifier environment ([verifier.environment], else a copy of [environment]). */
  readonly environment: Environment | null;
  /** Separate mode: how task.toml names the table `environment.env` comes from, for messages. */
  readonly env_table: string | null;
  /** Separate mode: the verifier's image. */
  readonly image: VerifierImage | null;
}

export interface Solution {
  /** Absolute folder holding the solution, or null. */
  readonly dir: string | null;
  readonly kind: 'solve_sh' | 'answer_md' | null;
  readonly env: Readonly<Record<string, string>>;
}

export interface StepSolution {
  readonly dir: string;
  readonly kind: 'solve_sh' | 'answer_md' | null;
  /** `step`: the step's own folder (kind null means that step has no answer); `task`: the task's solution/. */
  readonly from: 'step' | 'task';
}

export interface Step {
  readonly name: string;
  readonly dir: string;
  readonly instruction: string;
  /** The agent phase's network: [steps.agent]'s, else [agent]'s, else the environment's. */
  readonly agent: { readonly timeout_sec: number; readonly user: User | null } & NetworkPolicy;
  /** The verifier phase's network: [steps.verifier]'s, else [verifier]'s, else the baseline of its sandbox. */
  readonly verifier: {
    readonly timeout_sec: number;
    readonly user: User | null;
    /** [verifier].env with [steps.verifier].env over it. */
    readonly env: Readonly<Record<string, string>>;
    /** The step's own `[[steps.verifier.collect]]` hooks, run after the task's. */
    readonly collect: readonly CollectHook[];
    /** Folders uploaded to /tests, in order (task tests/ first, step tests/ on top). */
    readonly tests_dirs: readonly string[];
    /** Absolute path of the test.sh that grades the step; null for a separate step whose image must ship one. */
    readonly script: string | null;
    /** nemo_gym.data.tasks.harbor.verifier_env, step_verifier_mode. */
    readonly mode: VerifierMode;
    /** Separate mode: step_verifier_environment; null in shared mode. */
    readonly environment: Environment | null;
    /** Separate mode: how task.toml names the table `environment.env` comes from, for messages. */
    readonly env_table: string | null;
    /** Separate mode: the image ([steps.verifier.environment] or inherited docker_image, else a build of step_verifier_build_context). */
    readonly image: VerifierImage | null;
  } & NetworkPolicy;
  /** Absolute path of steps/<name>/workdir/, uploaded to the working directory before the step's agent; or null. */
  readonly workdir: string | null;
  /** steps/<name>/workdir/setup.sh exists: it runs (`bash <workdir>/setup.sh`) after the upload. */
  readonly setup_script: boolean;
  /** [steps.healthcheck]: polled after the step's setup, before its agent. */
  readonly healthcheck: Healthcheck | null;
  /** The step's own `artifacts`, collected after it beside the task's. */
  readonly artifacts: readonly Artifact[];
  readonly min_reward: number | Readonly<Record<string, number>> | null;
  readonly solution: StepSolution | null;
}

export interface EffectiveSettings {
  readonly num_repeats: number;
  readonly timeout_multiplier: number;
  readonly resource_multiplier: number;
}

export interface Task {
  /** The folder name: unique in the dataset. */
  readonly id: string;
  /** Absolute path of the task folder. */
  readonly path: string;
  readonly dataset_root: string;
  readonly digest: string;
  readonly schema_version: string | null;
  /** `[task].name` (Harbor's `org/name`), informational. */
  readonly name: string | null;
  readonly source: string | null;
  readonly metadata: Readonly<Record<string, unknown>>;
  /** instruction.md without leading canary lines; never sent for a multi-step task. */
  readonly instruction: string | null;
  readonly task_data: unknown;
  readonly multi_step: boolean;
  readonly steps: readonly Step[];
  readonly multi_step_reward_strategy: RewardStrategy;
  readonly artifacts: readonly Artifact[];
  readonly environment: Environment;
  /** The agent phase's network (single-step): [agent]'s own, else the environment's. */
  readonly agent: { readonly timeout_sec: number; readonly user: User | null } & NetworkPolicy;
  readonly verifier: Verifier;
  readonly solution: Solution;
  readonly image: ImagePlan;
  /** environment/docker-compose.yaml: the task runs as a group, its file merged over Berth's `main`. */
  readonly compose: ComposePlan | null;
  /** `trajectory.json` (or the first step's) seeding the agent: such a task runs with the oracle only. */
  readonly seed_trajectory: string | null;
  /** environment/skills/, uploaded to skills_dir at seed when the sandbox's folder is missing or empty. */
  readonly skills_source: string | null;
  readonly settings: EffectiveSettings;
  readonly warnings: readonly string[];
}
