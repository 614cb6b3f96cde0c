// The provider on Docker: the neutral part (seed, exec, detached processes, files, stop, start, removal, janitor)
// is DriverSandboxProvider's on the Docker driver; images, stdin processes, networks and kept final states are Docker's own.
import type { RegistryCredentials } from '../registry-auth.ts';
import type Docker from 'dockerode';
import { join } from 'node:path';
import { DriverSandboxProvider } from '../driver-provider.ts';
import type { ImageConfig } from '../image-config.ts';
import type { ApplyNetworkOptions, EgressNetwork, PhaseNetwork } from '../network-phase.ts';
import { applyPhaseNetwork, ensureEgressNetwork, holdsAddress } from './phase-network.ts';
import { dockerFromEnv } from './client.ts';
import type { ComposeCliSettings } from '../compose/cli.ts';
import { DockerDriver } from './driver.ts';
import { ENGINE_ANSWER_SEC } from './engine-deadline.ts';
import { startStdinExec } from './exec.ts';
import { addressOf, engineInfo, imageIdOf, imageLabels, imagePathArchive, imagesLabelled, runOnce, tagImage } from './engine-images.ts';
import type { BuildImageOptions, BuildImageResult, EngineImage, EnsureImageOptions } from '../image-types.ts';
import { keepFinalState, listFinalStates, removeFinalStates } from './final-state.ts';
import { retentionDays, type GcSelection, type KeptState } from '../final-states.ts';
import { gpuSupport } from './gpu-probe.ts';
import { subnetSource, type SubnetSettings } from './group-network.ts';
import { readImageConfig } from './image-inspect.ts';
import { buildImage, DEFAULT_STATE_DIR, ensureImage } from './images.ts';
import { pushImage } from './push.ts';
import type { GpuSupport, SandboxHandle, StdinExecOptions, StdinProcess } from '../types.ts';
import type { LocalImageEngine, SandboxProvider } from '../provider.ts';
import { janitorPool, renameSandbox } from './lifecycle.ts';
import type { JanitorOptions, JanitorReport } from '../types.ts';

/** What the worker hands the sandbox (src/host/deps.ts); tests and the CLI leave out what they do not need. */
export interface DockerProviderOptions {
  /** Where image builds keep their logs and locks and groups their project files (`groups/`); the worker gives BERTH_HOME. */
  stateDir?: string;
  /** Where episode networks' subnets come from (BERTH_SUBNET_POOL, BERTH_SUBNET_SIZE), checked here. */
  subnets?: SubnetSettings;
  /** Where Docker Compose is (BERTH_COMPOSE_CLI, DOCKER_CONFIG). */
  compose?: ComposeCliSettings;
  /** Days a kept final state lives (BERTH_FINAL_STATE_RETENTION_DAYS); default 7. */
  finalStateRetentionDays?: number;
  /** How long a seed's image read, create, attach or start, or a removal, may go unanswered before the sandbox counts as lost; default 120 s. */
  engineAnswerSec?: number;
}

export class DockerSandboxProvider extends DriverSandboxProvider<DockerDriver> implements SandboxProvider, LocalImageEngine {
  readonly stateDir: string | undefined;
  readonly finalStateRetentionDays: number;
  private readonly answerSec: number;

  constructor(readonly docker: Docker = dockerFromEnv(), options: DockerProviderOptions = {}) {
    super(new DockerDriver({
      docker, groupsDir: join(options.stateDir ?? DEFAULT_STATE_DIR, 'groups'),
      subnets: subnetSource(options.subnets), ...(options.compose ? { compose: options.compose } : {}),
      ...(options.engineAnswerSec !== undefined ? { engineAnswerSec: options.engineAnswerSec } : {}),
    }));
    this.stateDir = options.stateDir;
    this.finalStateRetentionDays = retentionDays(options.finalStateRetentionDays);
    this.answerSec = options.engineAnswerSec ?? ENGINE_ANSWER_SEC;
  }

  execWithStdin(handle: SandboxHandle, o: StdinExecOptions): Promise<StdinProcess> {
    return startStdinExec(this.docker, handle, o, this.answerSec);
  }

  /** A warm pool's claim: the running sandbox takes the episode's name (labels cannot change: docs/performance-notes.md, The warm pool). */
  rename(handle: SandboxHandle, name: string): Promise<SandboxHandle> {
    return renameSandbox(this.docker, handle, name, this.answerSec);
  }

  /** Warm-pool sandboxes first (they carry no workflow label), then what the neutral janitor finds. */
  override async janitor(options: JanitorOptions): Promise<JanitorReport> {
    const pooled = await janitorPool(this.docker, options, (id) => this.driver.remove({ name: id, kind: 'single' }), this.answerSec);
    const rest = await super.janitor(options);
    return { removed: [...pooled.removed, ...rest.removed], kept: [...pooled.kept, ...rest.kept] };
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

  pushImage(ref: string, repository: string, tag: string, credentials?: RegistryCredentials | null): Promise<string> {
    return pushImage(this.docker, ref, repository, tag, credentials);
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

  imagePathArchive(image: string, path: string): Promise<Buffer | null> {
    return imagePathArchive(this.docker, image, path);
  }
}
