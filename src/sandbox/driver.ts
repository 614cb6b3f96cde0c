// The narrow driver under the provider-neutral sandbox (docs/design.md section 6, after Harbor's
// environments/base.py and Inspect's sandbox environment): a few primitives, nothing a second
// provider (a remote engine, Kubernetes) could not offer. Detached processes, overlay RUN lines,
// healthchecks, the entrypoint and the seed markers are built on `exec`, once, for every driver.
//
// The one error a driver guarantees for a sandbox that is gone (container removed or stopped from
// outside, engine unreachable, transfer broken) is SandboxLost; callers never read engine errors.
import type { RawExecOptions } from './exec.ts';
import type { ImageConfig } from './image-config.ts';
import type { ExecResult, SandboxHandle, SandboxInfo, SandboxLabels } from './types.ts';

export { SandboxLost } from './errors.ts';

/** What a driver can do; the loader and the seed refuse what a task needs and the driver lacks. */
export interface DriverCapabilities {
  /** Groups of several services (Compose tasks). */
  readonly groups: boolean;
  /** A group network with no route out (a no-network task whose services still see each other). */
  readonly internalNetworks: boolean;
  /** Disconnecting a running sandbox from its network and connecting it again (per-phase network modes). */
  readonly networkSwitching: boolean;
  /** Exec as `user:group`. */
  readonly userWithGroup: boolean;
  /** GPUs for a sandbox (`gpus`); whether this engine or cluster has any is asked at prepare (SandboxProvider.gpuSupport). */
  readonly gpus: boolean;
  /** A sandbox on no network at all (`network_mode = "no-network"`). */
  readonly noNetwork: boolean;
  /** Egress limited to `allowed_hosts` (`network_mode = "allowlist"`). */
  readonly allowlist: boolean;
  /** Keeping a sandbox's final state as an image (`--keep-final-state`, berth regrade). */
  readonly finalState: boolean;
  /** Stopping a sandbox and starting it again with its files kept (a separate verifier stops the agent's sandbox). */
  readonly stopStart: boolean;
  /** The worker's model gateway reachable from inside the sandbox (an installed agent calls its model through it). */
  readonly modelGateway: boolean;
}

/** The engine a driver talks to: its id names the host's sandbox queue. */
export interface EngineIdentity {
  readonly id: string;
  readonly name: string;
  readonly version: string;
}

/** One service of a group, as exec and the file primitives address it. Plain data. */
export type ServiceHandle = SandboxHandle;

/** A created (or adopted) group. Plain data: safe to keep in workflow history. */
export interface GroupHandle {
  /** The group's name (a Compose project on Docker). */
  readonly project: string;
  /** Service name → its handle; `main` is the agent's. */
  readonly services: Readonly<Record<string, ServiceHandle>>;
  readonly networks: readonly string[];
  /** Services not running when the handle was made (a one-shot service that completed). */
  readonly stopped: readonly string[];
}

/** Berth's `main` of a group; the task's compose file is laid over it. */
export interface GroupMainSpec {
  readonly image: string;
  /** The root setup, then `exec sleep infinity`: main's entrypoint (its command cleared); a new group is returned once main reached the sleep. */
  readonly keepAlive: readonly string[];
  /** main's environment over the file's ([environment].env and the Dockerfile's ENV); sidecars get none of it. */
  readonly env: Readonly<Record<string, string>>;
  /** The resolved agent user and working directory (main's handle carries them). */
  readonly user: string;
  readonly workdir: string;
  readonly cpus?: number;
  readonly memoryMb?: number;
  readonly imageHasHealthcheck?: boolean;
}

/** One sandbox of its own (not a group): Berth's keep-alive on the image, as a group's main has it; created once it reached `sleep infinity`. */
export interface SingleSandboxSpec extends Omit<GroupMainSpec, 'imageHasHealthcheck'> {
  /** Deterministic per episode and role, so a retried create adopts instead of making a second. */
  readonly name: string;
  readonly labels: SandboxLabels;
  readonly gpus?: number;
  /** The engine's bridge, none, or a network by name. */
  readonly network: string;
  /** Its network changes after the start (per phase, or after overlay RUN lines): a driver that must prepare for that does. */
  readonly networkPhases?: boolean;
  /**
   * The caller's next calls on this sandbox go through this same driver object: a driver may return once the container
   * started, and confirm the keep-alive's setup in its first exec instead of an exec of its own (Kubernetes).
   */
  readonly readyOnFirstExec?: boolean;
}

export interface GroupSpec {
  /** Deterministic per episode and role, so a retried create adopts instead of making a second group. */
  readonly project: string;
  readonly labels: SandboxLabels;
  /** The task's compose file and the folder its relative paths resolve against. */
  readonly composeFile: string;
  readonly projectDir: string;
  /** What the compose file is interpolated with. */
  readonly interpolationEnv: NodeJS.ProcessEnv;
  readonly main: GroupMainSpec;
  /** main settled once the file is resolved (its `entrypoint` or `command` for main change what main runs); default `main`. */
  mainFor?(resolved: ResolvedGroup): GroupMainSpec;
  /** Given the resolved services, the image each sidecar runs (built or aliased by the caller). */
  prepareImages(resolved: ResolvedGroup): Promise<Record<string, string>>;
  /** No route out of the group's network. */
  readonly internal: boolean;
  /**
   * Engine networks outside the group that every service joins before it starts (a task whose network switches by
   * phase: its group networks are internal, and the way out of its baseline is joined here and switched later).
   */
  readonly attachFirst?: readonly string[];
  /** Berth's variables for every sidecar (main's are in `main.env`). */
  readonly sidecarEnv?: Readonly<Record<string, string>>;
  /** Budget for every service to be running, or healthy where it has a healthcheck. */
  readonly waitTimeoutSec: number;
  /**
   * main's own seed (overlay, entrypoint, healthcheck, marker), run once main and what it depends on are up and before
   * any service that depends on main starts; then main's own Compose healthcheck, if the file gives one, is awaited.
   */
  afterMain?(main: ServiceHandle): Promise<void>;
}

/** What reading a group's compose file needs (main's image only stands in for Berth's `main` under the file). */
export type ComposeFileSpec = Pick<GroupSpec, 'project' | 'composeFile' | 'projectDir' | 'interpolationEnv'> & { readonly main: Pick<GroupMainSpec, 'image'> & Partial<GroupMainSpec> };

/** The services of a compose file after interpolation and merging (the driver's resolver's output). */
export interface ResolvedGroup {
  readonly services: Readonly<Record<string, {
    readonly image?: string;
    readonly entrypoint?: readonly string[] | null;
    readonly command?: readonly string[] | null;
    readonly build?: { readonly context?: string; readonly dockerfile?: string; readonly args?: Readonly<Record<string, string | null>>; readonly target?: string };
    readonly pull_policy?: string;
  }>>;
}

export interface GroupCreateResult {
  readonly group: GroupHandle;
  readonly adopted: boolean;
  /** Sidecars running at the engine's default size (no deploy.resources.limits); empty when adopted. */
  readonly defaultSized: readonly string[];
}

/** A sandbox or group the engine holds with Berth's labels (what the janitor walks). */
export interface LabelledSandbox {
  /** A group's project, or a single sandbox's container name. */
  readonly name: string;
  readonly kind: 'single' | 'group';
  readonly workflowId: string;
}

export interface SandboxDriver {
  /** The sandbox's name as `--sandbox` and `[sandbox] provider` spell it; for messages only (decisions read capabilities). */
  readonly sandbox: string;
  readonly capabilities: DriverCapabilities;
  engineIdentity(): Promise<EngineIdentity>;
  /** A single sandbox: created, or adopted when one of that name finished its seed (the seeded marker). */
  createOrAdoptSandbox(spec: SingleSandboxSpec): Promise<{ handle: ServiceHandle; adopted: boolean }>;
  createOrAdoptGroup(spec: GroupSpec): Promise<GroupCreateResult>;
  /** Why this driver cannot run the group (each Compose key it does not map, named), read before any work; null when it can. Absent: it runs whatever loads. */
  groupRefusal?(spec: ComposeFileSpec): Promise<string | null>;
  /** The group as the engine has it now (a new worker rebuilding handles); SandboxLost when main is gone. */
  inspectGroup(project: string): Promise<GroupHandle>;
  /** The handle of a single sandbox by its Berth name (a new worker rebuilding handles); SandboxLost when it is gone. */
  attach(name: string): Promise<ServiceHandle>;
  /** The sandbox's state as the engine has it now; SandboxLost when it is gone. */
  inspect(target: ServiceHandle): Promise<SandboxInfo>;
  /** The last lines of the sandbox's own output (bounded), or a word saying it is unavailable; never throws. */
  logTail(target: ServiceHandle): Promise<string>;
  /** Output is kept (the last bytes) and, with streamToFile, streamed to a host file as it arrives. */
  exec(target: ServiceHandle, options: RawExecOptions): Promise<ExecResult>;
  /** Unpacks a tar archive into an absolute folder of the service (missing parents are created). */
  putArchive(target: ServiceHandle, containerDir: string, archive: Buffer | NodeJS.ReadableStream): Promise<void>;
  /** A tar archive of one path of the service. */
  getArchive(target: ServiceHandle, containerPath: string): Promise<NodeJS.ReadableStream>;
  /** What is at a path of the service (the archive API's stat, no process in the container: any image, running or not); null when nothing. */
  pathKind(target: ServiceHandle, containerPath: string): Promise<PathKind | null>;
  /** Stopped containers are kept (artifacts, a separate verifier); stopping a stopped one is fine. */
  stop(target: ServiceHandle): Promise<void>;
  start(target: ServiceHandle): Promise<void>;
  /** Removes a single sandbox (by container name) or a whole group (by project); gone already is fine. */
  remove(sandbox: Pick<LabelledSandbox, 'name' | 'kind'>): Promise<{ removed: boolean }>;
  /** Every sandbox and group carrying all the labels (`key` or `key=value`). */
  listByLabel(labels: readonly string[]): Promise<LabelledSandbox[]>;
  /** null when the engine has no such image. */
  imageConfiguration(ref: string): Promise<ImageConfig | null>;
  /** Leaves a single sandbox on `network` alone ('none': on no network), as a create on it would have. */
  putOnNetwork(target: ServiceHandle, network: string): Promise<void>;
}

/** What the behaviour written once on exec needs of a driver (detached processes, seed phases, markers, healthchecks). */
export type ExecPort = Pick<SandboxDriver, 'exec'>;

/** What moving files in and out of a sandbox needs: the archive primitives, and exec to set the owner. */
export type FilesPort = Pick<SandboxDriver, 'exec' | 'putArchive' | 'getArchive' | 'pathKind'>;

export type PathKind = 'dir' | 'file';
