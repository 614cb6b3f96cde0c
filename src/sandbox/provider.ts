// The face every engine's provider shows the layers above the sandbox (one per engine, over its driver).
import type { RegistryCredentials } from './registry-auth.ts';
import type { GcSelection, KeptState } from './final-states.ts';
import type { ApplyNetworkOptions, EgressNetwork, PhaseNetwork } from './network-phase.ts';
import type { ImageConfig } from './image-config.ts';
import type { BuildImageOptions, BuildImageResult, EngineImage, EnsureImageOptions } from './image-types.ts';
import type { EntrypointState } from './seed-phases.ts';
import type { SandboxDriver } from './driver.ts';
import type { SlotStore } from './slot-store.ts';
import type { ClusterStatus } from './cluster-status.ts';
import type { HealthcheckSpec, SandboxSpec, SandboxHandle, SeedResult, ExecOptions, ExecResult, StdinExecOptions, StdinProcess, DetachedLaunchOptions, DetachedLaunchResult, DetachedWaitOptions, DetachedResult, UploadEntry, UploadOptions, SandboxInfo, GpuSupport, JanitorOptions, JanitorReport } from './types.ts';

export interface SandboxProvider {
  /** The driver every sandbox of this provider is reached through (single sandboxes and groups alike). */
  readonly driver: SandboxDriver;
  /** The engine's images: pulls, configurations, builds, ids, labels, tags and the agents' layers. */
  readonly images: SandboxImages;
  /** Networks: the egress network, addresses, and switching a sandbox's networks between phases. */
  readonly network: SandboxNetwork;
  /** Final states kept as images (regrade in shared mode); absent where the engine cannot keep one. */
  readonly finalStates?: SandboxFinalStates;
  seed(spec: SandboxSpec): Promise<SeedResult>;
  /** Rebuild a handle from an existing container's name (e.g. in a new worker process). */
  attach(name: string): Promise<SandboxHandle>;
  exec(handle: SandboxHandle, options: ExecOptions): Promise<ExecResult>;
  /** A process talked to over its stdin and stdout while it runs (an MCP stdio server). */
  execWithStdin(handle: SandboxHandle, options: StdinExecOptions): Promise<StdinProcess>;
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
  /** Whether sandboxes on this engine can be given GPUs, and why not (asked once, with a local image to try). */
  gpuSupport(probeImage: string): Promise<GpuSupport>;
  /** The engine's id (what a host's sandbox queue is named after) and its machine's name. */
  engineInfo(): Promise<{ id: string; name: string | null }>;
  /** Waits for a healthcheck to pass (the spec's start period, interval and retries); throws when it never does. */
  pollHealthcheck(handle: SandboxHandle, hc: HealthcheckSpec, watchEntrypoint: boolean, user?: string): Promise<void>;
}

/** An engine's images (on Kubernetes: the local engine's, pushed to the cluster's registry and named by digest). */
export interface SandboxImages {
  /** The image present locally (pulled once when not), with its configuration. */
  ensure(ref: string, options?: EnsureImageOptions): Promise<ImageConfig>;
  /** An image's configuration, or null when the engine does not have it. */
  config(ref: string): Promise<ImageConfig | null>;
  build(options: BuildImageOptions): Promise<BuildImageResult>;
  /** An image's id (`sha256:…`). */
  id(ref: string): Promise<string>;
  /** An image's labels, or null when the engine does not have it. */
  labels(ref: string): Promise<Record<string, string> | null>;
  /** Gives an image a second name. */
  tag(ref: string, repo: string, tag: string): Promise<void>;
  /** The images carrying a label (`key=value`): an installed agent's layers. */
  labelled(label: string): Promise<EngineImage[]>;
  /** Runs a command once in a throwaway container of the image, with no network. */
  runOnce(image: string, argv: string[], o?: { user?: string; labels?: Record<string, string> }): Promise<{ exitCode: number; stdout: string }>;
}

/** How sandboxes reach and are kept from the network. */
export interface SandboxNetwork {
  /** The host's internal network for allowlist sandboxes (created or adopted). */
  egress(): Promise<EgressNetwork>;
  /** A running service's network address, or null. */
  address(container: string): Promise<string | null>;
  /** Whether `container` still holds `ip` on `network` (an address a newer sandbox may have taken). */
  holds(network: string, ip: string, container: string): Promise<boolean>;
  /** Puts the sandbox on the networks of a phase, and on no other. */
  applyPhase(handle: SandboxHandle, want: PhaseNetwork, opts?: ApplyNetworkOptions): Promise<void>;
  /** The address ranges of the network sandboxes start on by default (Docker: the bridge), each with its gateway when listed. */
  defaultRanges(): Promise<Array<{ gateway: string | null; subnet: string | null }>>;
}

/** A sandbox's final state kept as an image, listed and removed (`berth gc`). */
export interface SandboxFinalStates {
  /** Days a kept final state lives before `berth gc` removes it. */
  readonly retentionDays: number;
  keep(container: string, ids: { batch: string; workflowId: string; runId: string }): Promise<string>;
  list(): Promise<KeptState[]>;
  remove(sel: GcSelection): Promise<{ removed: KeptState[]; kept: Array<KeptState & { reason: string }> }>;
}

/** The images of the engine beside the worker (pulls, builds, overlays, tags), and a push of one to a registry. */
export interface LocalImageEngine {
  readonly images: SandboxImages;
  /** Tags `ref` as `repository:tag`, pushes it (with the registry's credentials when given), and answers `repository@sha256:…`. */
  pushImage(ref: string, repository: string, tag: string, credentials?: RegistryCredentials | null): Promise<string>;
  /** The files at `path` in an image as a tar archive (the path's own name first), or null when it has none there. */
  imagePathArchive(image: string, path: string): Promise<Buffer | null>;
}
