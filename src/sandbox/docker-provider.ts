import type Docker from 'dockerode';
import { launchDetached, startDetached, waitDetached } from './detached.ts';
import { dockerFromEnv } from './docker-client.ts';
import { janitorGroups } from './docker/compose-group.ts';
import { DockerDriver } from './docker/driver.ts';
import { asSandboxError, SandboxLost } from './errors.ts';
import { runExec } from './exec.ts';
import { downloadPath, uploadPath } from './files.ts';
import { gpuSupport } from './gpus.ts';
import { readImageConfig, type ImageConfig } from './image-config.ts';
import { buildImage, ensureImage, type BuildImageOptions, type BuildImageResult, type EnsureImageOptions } from './images.ts';
import { inspectSandbox, resumeSandbox, runJanitor, stopSandbox, teardownSandbox } from './lifecycle.ts';
import { handleFromInspect, seedSandbox } from './seed.ts';
import { entrypointState, pollHealthcheck, type EntrypointState } from './seed-phases.ts';
import { addressOf, engineInfo, imageIdOf, imageLabels, imagesLabelled, runOnce, tagImage, type EngineImage } from './engine-images.ts';
import { keepFinalState, listFinalStates, removeFinalStates, type GcSelection, type KeptState } from './final-state.ts';
import { applyPhaseNetwork, ensureEgressNetwork, holdsAddress, type ApplyNetworkOptions, type EgressNetwork, type PhaseNetwork } from './network-phase.ts';
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
  UploadEntry,
  UploadOptions,
} from './types.ts';

export class DockerSandboxProvider implements SandboxProvider {
  /** `stateDir`: where image builds keep their logs and locks (the worker gives BERTH_HOME). */
  constructor(readonly docker: Docker = dockerFromEnv(), readonly stateDir?: string) {}

  seed(spec: SandboxSpec): Promise<SeedResult> {
    return seedSandbox(this.docker, spec);
  }

  async attach(name: string): Promise<SandboxHandle> {
    try {
      return handleFromInspect(await this.docker.getContainer(name).inspect());
    } catch (err) {
      throw (err as { statusCode?: number }).statusCode === 404 ? new SandboxLost(name, err) : asSandboxError(name, err);
    }
  }

  /** Runs `bash -c <command>` (not -l: a login shell would reset the image's PATH from /etc/profile). */
  exec(handle: SandboxHandle, o: ExecOptions): Promise<ExecResult> {
    return runExec(this.docker, handle, {
      argv: ['bash', '-c', o.command],
      user: o.user,
      workdir: o.workdir,
      env: o.env,
      timeoutSec: o.timeoutSec,
      outputCapBytes: o.outputCapBytes,
      streamToFile: o.streamToFile,
    });
  }

  startDetached(handle: SandboxHandle, options: DetachedStartOptions): Promise<DetachedStartResult> {
    return startDetached(this.docker, handle, options);
  }

  waitDetached(handle: SandboxHandle, key: string, options?: DetachedWaitOptions): Promise<DetachedResult> {
    return waitDetached(this.docker, handle, key, options);
  }

  launchDetached(handle: SandboxHandle, options: DetachedLaunchOptions): Promise<DetachedLaunchResult> {
    return launchDetached(this.docker, handle, options);
  }

  upload(handle: SandboxHandle, source: string | UploadEntry[], containerDir: string, options?: UploadOptions): Promise<void> {
    return uploadPath(this.docker, handle, source, containerDir, options);
  }

  download(handle: SandboxHandle, containerPath: string, hostDir: string): Promise<void> {
    return downloadPath(this.docker, handle, containerPath, hostDir);
  }

  inspect(handle: SandboxHandle): Promise<SandboxInfo> {
    return inspectSandbox(this.docker, handle);
  }

  entrypointState(handle: SandboxHandle): Promise<EntrypointState> {
    return entrypointState(this.docker, handle);
  }

  stop(handle: SandboxHandle): Promise<void> {
    return stopSandbox(this.docker, handle);
  }

  resume(handle: SandboxHandle): Promise<void> {
    return resumeSandbox(this.docker, handle);
  }

  teardown(nameOrHandle: string | SandboxHandle): Promise<{ removed: boolean }> {
    return teardownSandbox(this.docker, nameOrHandle);
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

  /** The group driver (Compose tasks) on this provider's engine connection; its project files go under `groupsDir`. */
  groupDriver(o: { groupsDir: string }): DockerDriver {
    return new DockerDriver({ docker: this.docker, groupsDir: o.groupsDir });
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
    return pollHealthcheck(this.docker, handle, hc, watchEntrypoint, user);
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
    return keepFinalState(this.docker, container, ids);
  }

  listFinalStates(): Promise<KeptState[]> {
    return listFinalStates(this.docker);
  }

  removeFinalStates(sel: GcSelection): Promise<{ removed: KeptState[]; kept: Array<KeptState & { reason: string }> }> {
    return removeFinalStates(this.docker, sel);
  }

  async defaultNetworkRanges(): Promise<Array<{ gateway: string | null; subnet: string | null }>> {
    const info = (await this.docker.getNetwork('bridge').inspect()) as { IPAM?: { Config?: Array<{ Gateway?: string; Subnet?: string }> } };
    return (info.IPAM?.Config ?? []).map((c) => ({ gateway: c.Gateway || null, subnet: c.Subnet || null }));
  }

  buildImage(options: BuildImageOptions): Promise<BuildImageResult> {
    return buildImage(this.docker, { ...(this.stateDir ? { stateDir: this.stateDir } : {}), ...options });
  }
}
