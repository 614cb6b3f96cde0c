/** Plain-data inputs and results of the sandbox layer. Nothing here imports src/task. */
import type { RegistryCredentials } from './registry-auth.ts';
import type { EngineImage } from './docker/engine-images.ts';
import type { GcSelection, KeptState } from './docker/final-state.ts';
import type { ApplyNetworkOptions, EgressNetwork, PhaseNetwork } from './network-phase.ts';
import type { ImageConfig } from './image-config.ts';
import type { BuildImageOptions, BuildImageResult, EnsureImageOptions } from './docker/images.ts';
import type { EntrypointState } from './seed-phases.ts';
import type { SandboxDriver } from './driver.ts';
import type { SlotStore } from './slot-store.ts';
import type { ClusterStatus } from './cluster-status.ts';

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

export interface ExecResult {
  exitCode: number;
  stdout: string;
  stderr: string;
  stdoutTruncated: boolean;
  stderrTruncated: boolean;
  timedOut: boolean;
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

export interface SandboxProvider {
  /** The driver every sandbox of this provider is reached through (single sandboxes and groups alike). */
  readonly driver: SandboxDriver;
  /** Days a kept final state lives before `berth gc` removes it. */
  readonly finalStateRetentionDays: number;
  seed(spec: SandboxSpec): Promise<SeedResult>;
  /** Rebuild a handle from an existing container's name (e.g. in a new worker process). */
  attach(name: string): Promise<SandboxHandle>;
  exec(handle: SandboxHandle, options: ExecOptions): Promise<ExecResult>;
  /** A process talked to over its stdin and stdout while it runs (an MCP stdio server). */
  execWithStdin(handle: SandboxHandle, options: StdinExecOptions): Promise<StdinProcess>;
  startDetached(handle: SandboxHandle, options: DetachedStartOptions): Promise<DetachedStartResult>;
  waitDetached(handle: SandboxHandle, key: string, options?: DetachedWaitOptions): Promise<DetachedResult>;
  launchDetached(handle: SandboxHandle, options: DetachedLaunchOptions): Promise<DetachedLaunchResult>;
  upload(
    handle: SandboxHandle,
    source: string | UploadEntry[],
    containerDir: string,
    options?: UploadOptions,
  ): Promise<void>;
  /** Through the engine's archive API (no shell needed); `exclude` drops members as `tar --exclude` would. */
  download(handle: SandboxHandle, containerPath: string, hostDir: string, options?: { exclude?: readonly string[] }): Promise<void>;
  /** 'dir', 'file' or null (nothing there), through the engine's archive API: no shell needed, stopped or not. */
  pathKind(handle: SandboxHandle, containerPath: string): Promise<'dir' | 'file' | null>;
  inspect(handle: SandboxHandle): Promise<SandboxInfo>;
  /** The last lines of the container's own output (bounded), or a word saying it is unavailable. */
  logTail(handle: SandboxHandle): Promise<string>;
  /** Stops the sandbox's processes and keeps the container; already stopped is fine. */
  stop(handle: SandboxHandle): Promise<void>;
  /** Starts a stopped sandbox again; a running one is left alone. */
  resume(handle: SandboxHandle): Promise<void>;
  /** The image's entrypoint started at seed: none, running, exited (with code) or lost. */
  entrypointState(handle: SandboxHandle): Promise<EntrypointState>;
  teardown(nameOrHandle: string | SandboxHandle): Promise<{ removed: boolean }>;
  /** Gives a running sandbox another name (a warm pool's claim); absent where the engine cannot, and then no pool is kept. */
  rename?(handle: SandboxHandle, name: string): Promise<SandboxHandle>;
  janitor(options: JanitorOptions): Promise<JanitorReport>;
  /** Where a queue's sandbox slots are kept when every worker reaches every sandbox (a cluster); absent: on each host (a file). */
  slotStore?(scope: string): SlotStore;
  /** The cluster its sandboxes run on (`berth server status`); absent for a single engine. */
  clusterStatus?(): Promise<ClusterStatus>;
  /** The image present locally (pulled once when not), with its configuration. */
  ensureImage(ref: string, options?: EnsureImageOptions): Promise<ImageConfig>;
  /** An image's configuration, or null when the engine does not have it. */
  imageConfig(ref: string): Promise<ImageConfig | null>;
  buildImage(options: BuildImageOptions): Promise<BuildImageResult>;
  /** Whether sandboxes on this engine can be given GPUs, and why not (asked once, with a local image to try). */
  gpuSupport(probeImage: string): Promise<GpuSupport>;
  /** The address ranges of the network sandboxes start on by default (Docker: the bridge), each with its gateway when listed. */
  defaultNetworkRanges(): Promise<Array<{ gateway: string | null; subnet: string | null }>>;
  /** An image's id (`sha256:…`). */
  imageId(ref: string): Promise<string>;
  /** An image's labels, or null when the engine does not have it. */
  imageLabels(ref: string): Promise<Record<string, string> | null>;
  /** Gives an image a second name. */
  tagImage(ref: string, repo: string, tag: string): Promise<void>;
  /** Runs a command once in a throwaway container of the image, with no network. */
  runOnce(image: string, argv: string[], o?: { user?: string; labels?: Record<string, string> }): Promise<{ exitCode: number; stdout: string }>;
  /** The images carrying a label (`key=value`). */
  imagesLabelled(label: string): Promise<EngineImage[]>;
  /** The engine's id (what a host's sandbox queue is named after) and its machine's name. */
  engineInfo(): Promise<{ id: string; name: string | null }>;
  /** A running service's network address, or null. */
  addressOf(container: string): Promise<string | null>;
  /** Waits for a healthcheck to pass (the spec's start period, interval and retries); throws when it never does. */
  pollHealthcheck(handle: SandboxHandle, hc: HealthcheckSpec, watchEntrypoint: boolean, user?: string): Promise<void>;
  /** The host's internal network for allowlist sandboxes (created or adopted). */
  ensureEgressNetwork(): Promise<EgressNetwork>;
  /** Whether `container` still holds `ip` on `network` (an address a newer sandbox may have taken). */
  holdsAddress(network: string, ip: string, container: string): Promise<boolean>;
  /** Puts the sandbox on the networks of a phase, and on no other. */
  applyPhaseNetwork(handle: SandboxHandle, want: PhaseNetwork, opts?: ApplyNetworkOptions): Promise<void>;
  /** Keeps a sandbox's final state as an image (regrade in shared mode), and lists or removes kept ones. */
  keepFinalState(container: string, ids: { batch: string; workflowId: string; runId: string }): Promise<string>;
  listFinalStates(): Promise<KeptState[]>;
  removeFinalStates(sel: GcSelection): Promise<{ removed: KeptState[]; kept: Array<KeptState & { reason: string }> }>;
}

/** The images of the engine beside the worker (pulls, builds, overlays, tags), and a push of one to a registry. */
export interface LocalImageEngine extends Pick<SandboxProvider,
  'ensureImage' | 'imageConfig' | 'buildImage' | 'imageId' | 'imageLabels' | 'tagImage' | 'runOnce' | 'imagesLabelled'> {
  /** Tags `ref` as `repository:tag`, pushes it (with the registry's credentials when given), and answers `repository@sha256:…`. */
  pushImage(ref: string, repository: string, tag: string, credentials?: RegistryCredentials | null): Promise<string>;
  /** The files at `path` in an image as a tar archive (the path's own name first), or null when it has none there. */
  imagePathArchive(image: string, path: string): Promise<Buffer | null>;
}
