// The provider on Kubernetes: the neutral part (seed, exec, detached processes, files, removal, janitor) is
// DriverSandboxProvider's on the Kubernetes driver; images are built by the engine beside the worker and pushed to
// the registry the cluster pulls from (RegistryImages). What the driver cannot do yet is refused by its capabilities
// before any work; the methods below that refuse say so by name if reached anyway.
import { createHash } from 'node:crypto';
import { DriverSandboxProvider } from '../driver-provider.ts';
import type { ImageConfig } from '../image-config.ts';
import { EGRESS_NETWORK, type ApplyNetworkOptions, type EgressNetwork, type PhaseNetwork } from '../network-phase.ts';
import { RegistryImages } from '../registry-images.ts';
import type { BuildImageOptions, BuildImageResult, EnsureImageOptions } from '../docker/images.ts';
import type { EngineImage } from '../docker/engine-images.ts';
import type { GcSelection, KeptState } from '../docker/final-state.ts';
import type { GpuSupport, LocalImageEngine, SandboxHandle, SandboxProvider, StdinExecOptions, StdinProcess } from '../types.ts';
import { KubernetesDriver, type KubernetesDriverOptions } from './driver.ts';
import { ControllerImage } from './egress-image.ts';

export interface KubernetesProviderOptions extends KubernetesDriverOptions {
  /** The engine beside the worker that pulls, builds and pushes task images. */
  local: LocalImageEngine;
  /** [kubernetes].registry: host[:port][/prefix] the images are pushed to and pods pull from. */
  registryHost: string;
}

function notYet(what: string): Promise<never> {
  return Promise.reject(new Error(`the Kubernetes sandbox cannot ${what} yet (issue 23, docs/kubernetes.md "What is left"): run this task with --sandbox docker`));
}

export class KubernetesSandboxProvider extends DriverSandboxProvider<KubernetesDriver> implements SandboxProvider {
  readonly images: RegistryImages;
  /** It keeps no final states (finalState is not among its capabilities). */
  readonly finalStateRetentionDays = 0;

  constructor(options: KubernetesProviderOptions) {
    // The egress controller's image is pushed like a task image (its builder needs the images made just below).
    const controller: ControllerImage = new ControllerImage({ buildImage: (o) => options.local.buildImage(o), publish: (tag): Promise<string> => images.imageId(tag) });
    const driver: KubernetesDriver = new KubernetesDriver({ egressImage: (): Promise<string> => controller.get(), ...options });
    super(driver);
    const images: RegistryImages = new RegistryImages(options.local, options.registryHost, (ref): Promise<ImageConfig | null> => driver.imageConfiguration(ref));
    this.images = images;
    // A Compose group's sidecar images, built or pulled by the local engine, are pushed as main's is.
    driver.publishImage = (ref) => this.images.imageId(ref);
  }

  execWithStdin(_handle: SandboxHandle, _o: StdinExecOptions): Promise<StdinProcess> {
    return notYet('run a process over its stdin (MCP stdio servers)');
  }

  ensureImage(ref: string, options?: EnsureImageOptions): Promise<ImageConfig> {
    return this.images.ensureImage(ref, options);
  }

  imageConfig(ref: string): Promise<ImageConfig | null> {
    return this.images.imageConfig(ref);
  }

  buildImage(options: BuildImageOptions): Promise<BuildImageResult> {
    return this.images.buildImage(options);
  }

  imageId(ref: string): Promise<string> {
    return this.images.imageId(ref);
  }

  imageLabels(ref: string): Promise<Record<string, string> | null> {
    return this.images.imageLabels(ref);
  }

  tagImage(ref: string, repo: string, tag: string): Promise<void> {
    return this.images.tagImage(ref, repo, tag);
  }

  runOnce(image: string, argv: string[], o?: { user?: string; labels?: Record<string, string> }): Promise<{ exitCode: number; stdout: string }> {
    return this.images.runOnce(image, argv, o);
  }

  imagesLabelled(label: string): Promise<EngineImage[]> {
    return this.images.imagesLabelled(label);
  }

  gpuSupport(): Promise<GpuSupport> {
    return Promise.resolve({ ok: false, reason: 'the Kubernetes sandbox does not give pods GPUs yet (issue 23)' });
  }

  defaultNetworkRanges(): Promise<Array<{ gateway: string | null; subnet: string | null }>> {
    return notYet('serve the model gateway to pods');
  }

  async engineInfo(): Promise<{ id: string; name: string | null }> {
    const { id, name } = await this.driver.engineIdentity();
    return { id, name };
  }

  addressOf(): Promise<string | null> {
    return notYet('reach a service by its address');
  }

  /** No engine network: allowlist pods reach the worker's address alone (their rules), where the egress proxy serves. */
  async ensureEgressNetwork(): Promise<EgressNetwork> {
    const { id } = await this.driver.engineIdentity();
    return { id: createHash('sha256').update(id).digest('hex'), name: EGRESS_NETWORK, gateway: await this.driver.egress.workerAddress() };
  }

  holdsAddress(_network: string, ip: string, container: string): Promise<boolean> {
    return this.driver.egress.holds(container, ip);
  }

  applyPhaseNetwork(handle: SandboxHandle, want: PhaseNetwork, opts?: ApplyNetworkOptions): Promise<void> {
    return this.driver.egress.applyPhase(handle, want, opts);
  }

  keepFinalState(): Promise<string> {
    return notYet('keep a sandbox\'s final state');
  }

  listFinalStates(): Promise<KeptState[]> {
    return Promise.resolve([]);
  }

  removeFinalStates(_sel: GcSelection): Promise<{ removed: KeptState[]; kept: Array<KeptState & { reason: string }> }> {
    return Promise.resolve({ removed: [], kept: [] });
  }
}
