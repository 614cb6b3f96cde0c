// The provider on Docker: the neutral part (seed, exec, detached processes, files, stop, start, removal, janitor)
// is DriverSandboxProvider's on the Docker driver; stdin processes, renames and the pool's janitor are Docker's own, and
// its images, networks and kept final states are parts (parts.ts).
import type { RegistryCredentials } from '../registry-auth.ts';
import type Docker from 'dockerode';
import { join } from 'node:path';
import { DriverSandboxProvider } from '../driver-provider.ts';
import { dockerFromEnv } from './client.ts';
import type { ComposeCliSettings } from '../compose/cli.ts';
import { DockerDriver } from './driver.ts';
import { ENGINE_ANSWER_SEC } from './engine-deadline.ts';
import { ENGINE } from '../errors.ts';
import { lossTyped } from '../loss-typed.ts';
import { isDockerLoss } from './loss.ts';
import { startStdinExec } from './exec.ts';
import { engineInfo, imagePathArchive } from './engine-images.ts';
import { retentionDays } from '../final-states.ts';
import { dockerFinalStates, dockerImages, dockerNetwork } from './parts.ts';
import { gpuSupport } from './gpu-probe.ts';
import { subnetSource, type SubnetSettings } from './group-network.ts';
import { DEFAULT_STATE_DIR } from './images.ts';
import { pushImage } from './push.ts';
import type { GpuSupport, SandboxHandle, StdinExecOptions, StdinProcess } from '../types.ts';
import type { LocalImageEngine, SandboxFinalStates, SandboxImages, SandboxNetwork, SandboxProvider } from '../provider.ts';
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

const engine = () => ENGINE;

export class DockerSandboxProvider extends DriverSandboxProvider<DockerDriver> implements SandboxProvider, LocalImageEngine {
  readonly stateDir: string | undefined;
  readonly images: SandboxImages;
  readonly network: SandboxNetwork;
  readonly finalStates: SandboxFinalStates;
  private readonly answerSec: number;

  constructor(readonly docker: Docker = dockerFromEnv(), options: DockerProviderOptions = {}) {
    super(lossTyped(new DockerDriver({
      docker, groupsDir: join(options.stateDir ?? DEFAULT_STATE_DIR, 'groups'),
      subnets: subnetSource(options.subnets), ...(options.compose ? { compose: options.compose } : {}),
      ...(options.engineAnswerSec !== undefined ? { engineAnswerSec: options.engineAnswerSec } : {}),
    }), isDockerLoss));
    this.stateDir = options.stateDir;
    this.answerSec = options.engineAnswerSec ?? ENGINE_ANSWER_SEC;
    this.images = lossTyped(dockerImages(docker, options.stateDir), isDockerLoss, engine);
    this.network = lossTyped(dockerNetwork(docker), isDockerLoss, engine);
    this.finalStates = lossTyped(dockerFinalStates(docker, retentionDays(options.finalStateRetentionDays)), isDockerLoss, engine);
    // Every method, the neutral ones over the driver and the engine's own below: a loss leaves as SandboxLost.
    return lossTyped(this, isDockerLoss);
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

  gpuSupport(probeImage: string): Promise<GpuSupport> {
    return gpuSupport(this.docker, probeImage);
  }

  pushImage(ref: string, repository: string, tag: string, credentials?: RegistryCredentials | null): Promise<string> {
    return pushImage(this.docker, ref, repository, tag, credentials);
  }

  engineInfo(): Promise<{ id: string; name: string | null }> {
    return engineInfo(this.docker);
  }

  imagePathArchive(image: string, path: string): Promise<Buffer | null> {
    return imagePathArchive(this.docker, image, path);
  }
}
