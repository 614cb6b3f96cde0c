// The provider on Docker: a single sandbox's seed, exec, detached processes, files, stop, start and removal go
// through its driver (the behaviour on exec is written once, for any driver); images, inspection, the janitor,
// networks and kept final states are Docker's own.
import type Docker from 'dockerode';
import { join } from 'node:path';
import { launchDetached, startDetached, waitDetached } from '../detached.ts';
import { downloadPath, uploadPath } from '../files.ts';
import type { ImageConfig } from '../image-config.ts';
import type { ApplyNetworkOptions, EgressNetwork, PhaseNetwork } from '../network-phase.ts';
import { applyPhaseNetwork, ensureEgressNetwork, holdsAddress } from './phase-network.ts';
import { seedSandbox } from '../seed.ts';
import { entrypointState, pollHealthcheck, type EntrypointState } from '../seed-phases.ts';
import { asSandboxError, SandboxLost } from '../errors.ts';
import { dockerFromEnv } from './client.ts';
import type { ComposeCliSettings } from './compose-cli.ts';
import { janitorGroups, logTail } from './compose-group.ts';
import { DockerDriver } from './driver.ts';
import { startStdinExec } from './exec.ts';
import { addressOf, engineInfo, imageIdOf, imageLabels, imagesLabelled, runOnce, tagImage, type EngineImage } from './engine-images.ts';
import { keepFinalState, listFinalStates, removeFinalStates, retentionDays, type GcSelection, type KeptState } from './final-state.ts';
import { gpuSupport } from './gpu-probe.ts';
import { subnetSource, type SubnetSettings } from './group-network.ts';
import { readImageConfig } from './image-inspect.ts';
import { buildImage, DEFAULT_STATE_DIR, ensureImage, type BuildImageOptions, type BuildImageResult, type EnsureImageOptions } from './images.ts';
import { inspectSandbox, renameSandbox, runJanitor } from './lifecycle.ts';
import { handleFromInspect } from './single.ts';
import type {
  DetachedLaunchOptions,
  DetachedLaunchResult,
  DetachedResult,
  DetachedStartOptions,
  DetachedStartResult,
  DetachedWaitOptions,
  ExecOptions,
  GpuSupport,
  ExecResult,
  HealthcheckSpec,
  JanitorOptions,
  JanitorReport,
  SandboxHandle,
  SandboxInfo,
  SandboxProvider,
  SandboxSpec,
  SeedResult,
  StdinExecOptions,
  StdinProcess,
  UploadEntry,
  UploadOptions,
} from '../types.ts';

/** What the worker hands the sandbox (src/activities/deps.ts); tests and the CLI leave out what they do not need. */
export interface DockerProviderOptions {
  /** Where image builds keep their logs and locks and groups their project files (`groups/`); the worker gives BERTH_HOME. */
  stateDir?: string;
  /** Where episode networks' subnets come from (BERTH_SUBNET_POOL, BERTH_SUBNET_SIZE), checked here. */
  subnets?: SubnetSettings;
  /** Where Docker Compose is (BERTH_COMPOSE_CLI, DOCKER_CONFIG). */
  compose?: ComposeCliSettings;
  /** Days a kept final state lives (BERTH_FINAL_STATE_RETENTION_DAYS); default 7. */
  finalStateRetentionDays?: number;
}

export class DockerSandboxProvider implements SandboxProvider {
  /** The driver every sandbox of this provider is reached through (single sandboxes and groups alike). */
  readonly driver: DockerDriver;
  readonly stateDir: string | undefined;
  readonly finalStateRetentionDays: number;

  constructor(readonly docker: Docker = dockerFromEnv(), options: DockerProviderOptions = {}) {
    this.stateDir = options.stateDir;
    this.finalStateRetentionDays = retentionDays(options.finalStateRetentionDays);
    this.driver = new DockerDriver({
      docker, groupsDir: join(options.stateDir ?? DEFAULT_STATE_DIR, 'groups'),
      subnets: subnetSource(options.subnets), ...(options.compose ? { compose: options.compose } : {}),
    });
  }

  seed(spec: SandboxSpec): Promise<SeedResult> {
    return seedSandbox(this.driver, spec);
  }

  async attach(name: string): Promise<SandboxHandle> {
    try {
      return handleFromInspect(await this.docker.getContainer(name).inspect());
    } catch (err) {
      throw (err as { statusCode?: number }).statusCode === 404 ? new SandboxLost(name, err) : asSandboxError(name, err);
    }
  }

  /** Runs `bash -c <command>` (not -l: a login shell would reset the image's PATH from /etc/profile), or `sh -c`. */
  exec(handle: SandboxHandle, o: ExecOptions): Promise<ExecResult> {
    return this.driver.exec(handle, {
      argv: [o.shell ?? 'bash', '-c', o.command],
      user: o.user,
      workdir: o.workdir,
      env: o.env,
      timeoutSec: o.timeoutSec,
      outputCapBytes: o.outputCapBytes,
      streamToFile: o.streamToFile,
    });
  }

  execWithStdin(handle: SandboxHandle, o: StdinExecOptions): Promise<StdinProcess> {
    return startStdinExec(this.docker, handle, o);
  }

  startDetached(handle: SandboxHandle, options: DetachedStartOptions): Promise<DetachedStartResult> {
    return startDetached(this.driver, handle, options);
  }

  waitDetached(handle: SandboxHandle, key: string, options?: DetachedWaitOptions): Promise<DetachedResult> {
    return waitDetached(this.driver, handle, key, options);
  }

  launchDetached(handle: SandboxHandle, options: DetachedLaunchOptions): Promise<DetachedLaunchResult> {
    return launchDetached(this.driver, handle, options);
  }

  upload(handle: SandboxHandle, source: string | UploadEntry[], containerDir: string, options?: UploadOptions): Promise<void> {
    return uploadPath(this.driver, handle, source, containerDir, options);
  }

  download(handle: SandboxHandle, containerPath: string, hostDir: string, options?: { exclude?: readonly string[] }): Promise<void> {
    return downloadPath(this.driver, handle, containerPath, hostDir, options);
  }

  pathKind(handle: SandboxHandle, containerPath: string): Promise<'dir' | 'file' | null> {
    return this.driver.pathKind(handle, containerPath);
  }

  logTail(handle: SandboxHandle): Promise<string> {
    return logTail(this.docker, handle.containerId);
  }

  inspect(handle: SandboxHandle): Promise<SandboxInfo> {
    return inspectSandbox(this.docker, handle);
  }

  entrypointState(handle: SandboxHandle): Promise<EntrypointState> {
    return entrypointState(this.driver, handle);
  }

  stop(handle: SandboxHandle): Promise<void> {
    return this.driver.stop(handle);
  }

  resume(handle: SandboxHandle): Promise<void> {
    return this.driver.start(handle);
  }

  /** By handle, the very container (its id), never a newer one that took the name. */
  teardown(nameOrHandle: string | SandboxHandle): Promise<{ removed: boolean }> {
    return this.driver.remove({ name: typeof nameOrHandle === 'string' ? nameOrHandle : nameOrHandle.containerId, kind: 'single' });
  }

  /** A warm pool's claim: the running sandbox takes the episode's name (labels cannot change: docs/performance.md). */
  rename(handle: SandboxHandle, name: string): Promise<SandboxHandle> {
    return renameSandbox(this.docker, handle, name);
  }

  /** Groups first (whole: containers, networks, volumes), then single sandboxes. */
  async janitor(options: JanitorOptions): Promise<JanitorReport> {
    const groups: JanitorReport = { removed: [], kept: [] };
    await janitorGroups(this.docker, options, groups);
    const singles = await runJanitor(this.docker, options);
    return { removed: [...groups.removed, ...singles.removed], kept: [...groups.kept, ...singles.kept] };
  }

  ensureImage(ref: string, options?: EnsureImageOptions): Promise<ImageConfig> {
    return ensureImage(this.docker, ref, options);
  }

  imageConfig(ref: string): Promise<ImageConfig | null> {
    return readImageConfig(this.docker, ref);
  }

  gpuSupport(probeImage: string): Promise<GpuSupport> {
    return gpuSupport(this.docker, probeImage);
  }

  imageId(ref: string): Promise<string> {
    return imageIdOf(this.docker, ref);
  }

  imageLabels(ref: string): Promise<Record<string, string> | null> {
    return imageLabels(this.docker, ref);
  }

  tagImage(ref: string, repo: string, tag: string): Promise<void> {
    return tagImage(this.docker, ref, repo, tag);
  }

  runOnce(image: string, argv: string[], o?: { user?: string; labels?: Record<string, string> }): Promise<{ exitCode: number; stdout: string }> {
    return runOnce(this.docker, image, argv, o);
  }

  imagesLabelled(label: string): Promise<EngineImage[]> {
    return imagesLabelled(this.docker, label);
  }

  engineInfo(): Promise<{ id: string; name: string | null }> {
    return engineInfo(this.docker);
  }

  addressOf(container: string): Promise<string | null> {
    return addressOf(this.docker, container);
  }

  pollHealthcheck(handle: SandboxHandle, hc: HealthcheckSpec, watchEntrypoint: boolean, user?: string): Promise<void> {
    return pollHealthcheck(this.driver, handle, hc, watchEntrypoint, user);
  }

  ensureEgressNetwork(): Promise<EgressNetwork> {
    return ensureEgressNetwork(this.docker);
  }

  holdsAddress(network: string, ip: string, container: string): Promise<boolean> {
    return holdsAddress(this.docker, network, ip, container);
  }

  applyPhaseNetwork(handle: SandboxHandle, want: PhaseNetwork, opts?: ApplyNetworkOptions): Promise<void> {
    return applyPhaseNetwork(this.docker, handle, want, opts);
  }

  keepFinalState(container: string, ids: { batch: string; workflowId: string; runId: string }): Promise<string> {
    return keepFinalState(this.docker, container, ids, this.finalStateRetentionDays);
  }

  listFinalStates(): Promise<KeptState[]> {
    return listFinalStates(this.docker);
  }

  removeFinalStates(sel: GcSelection): Promise<{ removed: KeptState[]; kept: Array<KeptState & { reason: string }> }> {
    return removeFinalStates(this.docker, sel, this.finalStateRetentionDays);
  }

  async defaultNetworkRanges(): Promise<Array<{ gateway: string | null; subnet: string | null }>> {
    const info = (await this.docker.getNetwork('bridge').inspect()) as { IPAM?: { Config?: Array<{ Gateway?: string; Subnet?: string }> } };
    return (info.IPAM?.Config ?? []).map((c) => ({ gateway: c.Gateway || null, subnet: c.Subnet || null }));
  }

  buildImage(options: BuildImageOptions): Promise<BuildImageResult> {
    return buildImage(this.docker, { ...(this.stateDir ? { stateDir: this.stateDir } : {}), ...options });
  }
}
