// The provider on Kubernetes: the neutral part (seed, exec, detached processes, files, removal, janitor) is
// DriverSandboxProvider's on the Kubernetes driver; images are built by the engine beside the worker and pushed to
// the registry the cluster pulls from (RegistryImages). What the driver cannot do yet is refused by its capabilities
// before any work; the methods below that refuse say so by name if reached anyway.
import { kubernetesNetwork } from './network.ts';
import { DriverSandboxProvider } from '../driver-provider.ts';
import { connectionLost, ENGINE, SandboxLost } from '../errors.ts';
import { lossTyped } from '../loss-typed.ts';
import type { ImageConfig } from '../image-config.ts';
import { RegistryImages } from '../registry-images.ts';
import type { GpuSupport, SandboxHandle, SandboxSpec, SeedResult, StdinExecOptions, StdinProcess } from '../types.ts';
import type { LocalImageEngine, SandboxNetwork, SandboxProvider } from '../provider.ts';
import { CLUSTER, KubernetesDriver, type KubernetesDriverOptions } from './driver.ts';
import { ControllerImage } from './egress-image.ts';
import { ensurePullSecret, pullSecretName } from './pull-secret.ts';
import { RegistryReader } from './registry.ts';
import { dockerConfigPath, registryCredentials } from '../registry-auth.ts';
import { clusterGpuSupport } from './gpu-nodes.ts';
import { CONTAINER, execArgv } from './pod-spec.ts';
import { startStdinExecInPod } from './stdin-exec.ts';
import type { SlotStore } from '../slot-store.ts';
import { DEFAULT_MAX_PODS, SlotLeases } from './slot-leases.ts';
import type { ClusterStatus } from '../cluster-status.ts';
import { readClusterStatus } from './cluster-status.ts';

export interface KubernetesProviderOptions extends KubernetesDriverOptions {
  /** The engine beside the worker that pulls, builds and pushes task images. */
  local: LocalImageEngine;
  /** [kubernetes].registry: host[:port][/prefix] the images are pushed to and pods pull from. */
  registryHost: string;
  /** [kubernetes].docker_config: the config.json whose `auths` hold the registry's credentials (registry-auth.ts). */
  dockerConfig?: string;
  /** [kubernetes].max_pods: the most pods the queue's episodes hold at once (default DEFAULT_MAX_PODS), and where it was set. */
  maxPods?: number;
  maxPodsFrom?: string;
}

export class KubernetesSandboxProvider extends DriverSandboxProvider<KubernetesDriver> implements SandboxProvider {
  readonly images: RegistryImages;
  readonly network: SandboxNetwork;
  /** No finalStates: a pod's state is not kept (finalState is not among its capabilities). */

  /** Resolves once the pull secret is in the namespace (registries with credentials only). */
  private pullSecretReady: Promise<void> | undefined;
  private readonly ensurePullSecret: (() => Promise<void>) | undefined;

  constructor(options: KubernetesProviderOptions) {
    const configFile = dockerConfigPath(options.dockerConfig);
    const credentialsFor = (host: string) => registryCredentials(configFile, host);
    const host = options.registryHost.split('/')[0]!;
    const own = credentialsFor(host);
    // A secret named in berth.toml is the operator's: pods pull with it and Berth makes none.
    const secretCredentials = options.imagePullSecret ? undefined : own;
    // The egress controller's image is pushed like a task image (its builder needs the images made just below).
    const controller: ControllerImage = new ControllerImage({ buildImage: (o) => options.local.images.build(o), publish: (tag): Promise<string> => images.id(tag) });
    const driver: KubernetesDriver = new KubernetesDriver({
      egressImage: (): Promise<string> => controller.get(),
      ...options, registry: options.registry ?? new RegistryReader(undefined, credentialsFor),
      ...(secretCredentials ? { imagePullSecret: pullSecretName(host) } : {}),
    });
    super(lossTyped(driver, connectionLost));
    const images: RegistryImages = new RegistryImages(options.local, options.registryHost, (ref): Promise<ImageConfig | null> => driver.imageConfiguration(ref), own);
    this.images = lossTyped(images, connectionLost, () => ENGINE);
    if (secretCredentials) this.ensurePullSecret = async () => { await ensurePullSecret(driver.kubeConfig, driver.namespace, host, secretCredentials); };
    // A Compose group's sidecar images, built or pulled by the local engine, are pushed as main's is.
    driver.publishImage = (ref) => this.images.id(ref);
    // A Compose volume's first files come from the image as the local engine has it (pulled from the registry if not).
    driver.imagePathArchive = (image, path) => options.local.imagePathArchive(image, path);
    this.network = lossTyped(kubernetesNetwork(driver, options.egressAddress), connectionLost, () => CLUSTER);
    this.maxPods = options.maxPods ?? DEFAULT_MAX_PODS;
    this.maxPodsFrom = options.maxPods === undefined ? `default ${DEFAULT_MAX_PODS}` : (options.maxPodsFrom ?? 'given');
    // The cluster unreachable, whatever method met it, leaves as SandboxLost (the driver types the rest itself).
    return lossTyped(this, connectionLost);
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

  /** Pods pull by digest from the registry: an image named by a local tag (an agent's layer) is pushed and pinned first. */
  override async seed(spec: SandboxSpec): Promise<SeedResult> {
    if (this.ensurePullSecret) {
      this.pullSecretReady ??= this.ensurePullSecret().catch((err: unknown) => { this.pullSecretReady = undefined; throw err; });
      await this.pullSecretReady;
    }
    return super.seed(this.images.isPinned(spec.image) ? spec : { ...spec, image: await this.images.id(spec.image) });
  }

  /** Over the exec API's stdin; a pod that is gone (or no longer running) is SandboxLost, as every exec's. */
  async execWithStdin(handle: SandboxHandle, o: StdinExecOptions): Promise<StdinProcess> {
    const target = { namespace: this.driver.namespace, pod: handle.containerId, container: CONTAINER };
    await this.driver.confirmReady(handle);
    try {
      return await startStdinExecInPod(this.driver.kubeConfig, target, execArgv(handle, o));
    } catch (err) {
      const info = await this.driver.inspect(handle); // SandboxLost when the pod is gone
      if (!info.running) throw new SandboxLost(handle.name, err);
      throw err;
    }
  }

  /** Whether some node has nvidia.com/gpu to allocate (gpu-nodes.ts). */
  gpuSupport(): Promise<GpuSupport> {
    return clusterGpuSupport(this.driver.kubeConfig);
  }

  async engineInfo(): Promise<{ id: string; name: string | null }> {
    const { id, name } = await this.driver.engineIdentity();
    return { id, name };
  }

}
