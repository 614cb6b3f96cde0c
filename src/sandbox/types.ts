/** Plain-data inputs and results of the sandbox layer: no imports at all, so every sandbox file may use them. */
export type SandboxRole = 'agent' | 'verifier';

export interface SandboxLabels {
  batch: string;
  /** Empty for a pooled sandbox (no episode owns it until one claims it), but for one seeded for a known episode. */
  workflowId: string;
  role: SandboxRole;
  /** A warm pool's sandbox: labelled with these (Docker cannot relabel it at claim); judged by the pool's rules. */
  pool?: { queue: string; owner: string; key: string };
}

/** One Dockerfile RUN line of an overlay-mode task, with the settings in effect at its position. */
export interface OverlayRun {
  command: string;
  /** The whole environment in effect at the line (resolveDockerfileEnv). */
  env: Record<string, string>;
  /** Variables of the container's environment not yet set at the line: the line runs without them, as in a build. */
  unset?: string[];
  workdir: string;
  user: string;
}

export interface HealthcheckSpec {
  command: string;
  intervalSec: number;
  timeoutSec: number;
  startPeriodSec: number;
  startIntervalSec: number;
  retries: number;
}

export interface SandboxSpec {
  /** Container name; build it with containerName(workflowId, runId, role). */
  name: string;
  labels: SandboxLabels;
  image: string;
  /** Already templated; becomes the container's environment. */
  env: Record<string, string>;
  workdir?: string;
  user?: string;
  cpus?: number;
  memoryMb?: number;
  /** GPUs the sandbox gets (Docker device requests); the engine must have them (gpuSupport). */
  gpus?: number;
  /** The network the container starts on: the engine's bridge, none, or a network by name (the egress network). */
  network: 'bridge' | 'none' | (string & {});
  /** Its network switches per phase after the start (the Kubernetes driver gives its pod an egress controller). */
  networkPhases?: boolean;
  /** The image's ENTRYPOINT, with `sh -c "sleep infinity"` for its CMD, that Berth runs itself beside the keep-alive. */
  entrypoint?: { command: string[]; env: Record<string, string> };
  /** Awaited in order after the entrypoint starts: the image's HEALTHCHECK (on record), then the task's. */
  healthchecks?: HealthcheckSpec[];
  overlay?: { runs: OverlayRun[]; timeoutSec: number };
  /** Host folders uploaded before the entrypoint and healthchecks; no `containerDir`: the working directory. */
  uploadDirs?: { hostDir: string; containerDir?: string }[];
  /** The seed's caller works on the sandbox through this process's provider next (SingleSandboxSpec.readyOnFirstExec). */
  readyOnFirstExec?: boolean;
}

/** What later calls need to reach a seeded sandbox. Plain data: safe to keep in workflow history. */
export interface SandboxHandle {
  name: string;
  containerId: string;
  /** Resolved default user for exec (spec user, else the image's, else root). */
  user: string;
  /** Resolved working directory (spec workdir, else the image's, else /). */
  workdir: string;
}

export interface SeedResult {
  handle: SandboxHandle;
  /** True when a fully seeded container with this name already existed. */
  adopted: boolean;
}

export interface ExecOptions {
  /** Run with `bash -c` (not a login shell, so the image's PATH and ENV stay as they are), or `shell`'s `-c`. */
  command: string;
  /** `sh` for a service that may have no bash (a Compose sidecar's collect hook, as Gym runs them); default bash. */
  shell?: 'bash' | 'sh';
  user?: string;
  workdir?: string;
  env?: Record<string, string>;
  /** Enforced inside the container with `timeout -k <grace> <secs>`. */
  timeoutSec?: number;
  /** Per stream; the LAST bytes are kept. Default 1 MiB. */
  outputCapBytes?: number;
  /** Host file receiving stdout and stderr as they arrive (with backpressure). */
  streamToFile?: string;
}

/**
 * Why an exec never started its command, as the driver classified its engine's answer: a program of the argv (the
 * shell, `timeout`, the argv's own first word, a driver's launcher) not found or not runnable, a user or group the
 * image lacks, a working directory that is not there, or another refusal of the engine's.
 */
export type ExecNotStartedReason = 'no-program' | 'no-user' | 'no-workdir' | 'refused';

export interface ExecNotStarted {
  reason: ExecNotStartedReason;
  /** The program that could not be run (no-program). */
  program?: string;
  /** What the engine or the launcher said, for messages only. */
  text: string;
}

export interface ExecResult {
  exitCode: number;
  stdout: string;
  stderr: string;
  stdoutTruncated: boolean;
  stderrTruncated: boolean;
  timedOut: boolean;
  /** Set when the command never started (the exit code is then the engine's, 126 or 127, not the command's). */
  notStarted?: ExecNotStarted;
}

/** A process whose stdin stays open (execWithStdin): argv as is, no shell. */
export interface StdinExecOptions {
  argv: string[];
  user?: string;
  workdir?: string;
  env?: Record<string, string>;
  /** Enforced inside the container with `timeout -k <grace> <secs>`: the process never outlives it. */
  timeoutSec?: number;
}

/** The running process: write its stdin, read its stdout and stderr; ending stdin lets it finish. */
export interface StdinProcess {
  stdin: NodeJS.WritableStream;
  stdout: NodeJS.ReadableStream;
  stderr: NodeJS.ReadableStream;
  /** Its exit code once its output ended (null when the engine has none to give). */
  exited: Promise<number | null>;
  /** Drops the attachment: the process reads end of input and its next write fails. */
  detach(): void;
}

export interface DetachedStartOptions {
  /** Marker key, e.g. `<runId>-turn1`; [A-Za-z0-9_.-] only. */
  key: string;
  command: string;
  user?: string;
  workdir?: string;
  env?: Record<string, string>;
  timeoutSec?: number;
  /** Where the combined output goes inside the container; default <marker dir>/output. */
  outputPath?: string;
}

export interface DetachedStartResult {
  /** False when the key's marker already existed (nothing new was started). */
  started: boolean;
  dir: string;
}

/** Claim, prepare, start and a first short wait, in as few execs as the user allows (launchDetached). */
export interface DetachedLaunchOptions extends DetachedStartOptions {
  /** False: skip the claim (taking over a turn whose claimer died before starting it). Default true. */
  claim?: boolean;
  /** Shell run as root (under `set -e`) by the attempt that claims the key, before the start; $BERTH_STAGE is stageDir. */
  prepareScript?: string;
  /** A folder staged for prepareScript (e.g. by upload); removed when the process had already been started. */
  stageDir?: string;
  /** Report the last bytes of the output when the process ended during the call. */
  tailBytes?: number;
}

export interface DetachedLaunchResult {
  /** started: this call started it; exists: an earlier attempt did; claimed_by_other: another attempt is preparing it. */
  state: 'started' | 'exists' | 'claimed_by_other';
  dir: string;
  /** Set when the process had ended by the time the call returned. */
  done?: DetachedResult;
}

/** The output file's size and last bytes (decoded as UTF-8), or why there are none. */
export type DetachedOutput = { size: number; tail: string } | 'none' | 'unreadable';

export interface DetachedWaitOptions {
  /** The longest the wait goes without calling onPoll (default 10 s). */
  pollMs?: number;
  /** Report the last bytes of the output with the exit. */
  tailBytes?: number;
  /** Where the process's output goes, when started with an outputPath (for tailBytes). */
  outputPath?: string;
  onPoll?: (info: { elapsedMs: number }) => void | Promise<void>;
  signal?: AbortSignal;
}

export interface DetachedResult {
  exitCode: number;
  timedOut: boolean;
  /** Path inside the container of the combined stdout/stderr. */
  outputPath: string;
  /** When tailBytes was asked for: the output file's tail. */
  output?: DetachedOutput;
}

export interface UploadEntry {
  /** Relative path under the target directory. */
  name: string;
  content: Buffer | string;
  mode?: number;
}

export interface UploadOptions {
  /** user or user:group to own what was uploaded (chown -R after the copy). */
  owner?: string;
}

export interface SandboxInfo {
  name: string;
  containerId: string;
  running: boolean;
  status: string;
  exitCode: number | null;
  oomKilled: boolean;
  labels: Record<string, string>;
  /** The id of the image the container was created from. */
  image: string;
}

export type GpuSupport = { ok: true } | { ok: false; reason: string };

export interface JanitorOptions {
  isLive(workflowId: string): Promise<boolean>;
  /**
   * How to judge warm-pool sandboxes (docs/performance-notes.md, The warm pool); without it they are kept. One still under
   * its pool name goes when its worker process is gone; one an episode claimed (renamed) belongs to the episode
   * `episodeOf` names from the host's slots (undefined: no episode holds it, so it goes).
   */
  pool?: { ownerLive(owner: string): boolean; episodeOf(queue: string, name: string): string | undefined };
}

export interface JanitorReport {
  removed: { name: string; workflowId: string }[];
  kept: { name: string; workflowId: string; reason: string }[];
}
