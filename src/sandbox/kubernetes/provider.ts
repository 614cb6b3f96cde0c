// The provider on Kubernetes: the neutral part (seed, exec, detached processes, files, removal, janitor) is
// DriverSandboxProvider's on the Kubernetes driver; images are built by the engine beside the worker and pushed to
// the registry the cluster pulls from (RegistryImages). What the driver cannot do yet is refused by its capabilities
// before any work; the methods below that refuse say so by name if reached anyway.
import { DriverSandboxProvider } from '../driver-provider.ts';
import type { ImageConfig } from '../image-config.ts';
import type { ApplyNetworkOptions, EgressNetwork, PhaseNetwork } from '../network-phase.ts';
import { RegistryImages } from '../registry-images.ts';
import type { BuildImageOptions, BuildImageResult, EnsureImageOptions } from '../docker/images.ts';
import type { EngineImage } from '../docker/engine-images.ts';
import type { GcSelection, KeptState } from '../docker/final-state.ts';
import type { GpuSupport, LocalImageEngine, SandboxHandle, SandboxProvider, StdinExecOptions, StdinProcess } from '../types.ts';
import type { SlotStore } from '../slot-store.ts';
import { KubernetesDriver, type KubernetesDriverOptions } from './driver.ts';
import { DEFAULT_MAX_PODS, SlotLeases } from './slot-leases.ts';
import type { ClusterStatus } from '../cluster-status.ts';
import { readClusterStatus } from './cluster-status.ts';

export interface KubernetesProviderOptions extends KubernetesDriverOptions {
  /** The engine beside the worker that pulls, builds and pushes task images. */
  local: LocalImageEngine;
  /** [kubernetes].registry: host[:port][/prefix] the images are pushed to and pods pull from. */
  registryHost: string;
  /** [kubernetes].max_pods: the most pods the queue's episodes hold at once (default DEFAULT_MAX_PODS), and where it was set. */
  maxPods?: number;
  maxPodsFrom?: string;
}

function notYet(what: string): Promise<never> {
  return Promise.reject(new Error(`the Kubernetes sandbox cannot ${what} yet (issue 23, docs/kubernetes.md "What is left"): run this task with --sandbox docker`));
}

export class KubernetesSandboxProvider extends DriverSandboxProvider<KubernetesDriver> implements SandboxProvider {
  readonly images: RegistryImages;
  /** It keeps no final states (finalState is not among its capabilities). */
  readonly finalStateRetentionDays = 0;

  constructor(options: KubernetesProviderOptions) {
    const driver = new KubernetesDriver(options);
    super(driver);
    this.images = new RegistryImages(options.local, options.registryHost, (ref) => driver.imageConfiguration(ref));
    this.maxPods = options.maxPods ?? DEFAULT_MAX_PODS;
    this.maxPodsFrom = options.maxPods === undefined ? `default ${DEFAULT_MAX_PODS}` : (options.maxPodsFrom ?? 'given');
  }

  private readonly maxPods: number;
  private readonly maxPodsFrom: string;

  /** The slots of every worker on this cluster and namespace, as Leases in it (docs/kubernetes.md, Sandbox queues on Kubernetes). */
  slotStore(scope: string): SlotStore {
    return new SlotLeases(this.driver.kubeConfig, this.driver.namespace, scope, this.maxPods, this.maxPodsFrom);
  }

  clusterStatus(): Promise<ClusterStatus> {
    return readClusterStatus(this.driver.kubeConfig, this.driver.namespace);
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

  ensureEgressNetwork(): Promise<EgressNetwork> {
    return notYet('limit egress to an allowlist');
  }

  holdsAddress(): Promise<boolean> {
    return notYet('limit egress to an allowlist');
  }

  applyPhaseNetwork(_handle: SandboxHandle, _want: PhaseNetwork, _opts?: ApplyNetworkOptions): Promise<void> {
    return notYet('switch a sandbox\'s network per phase');
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
