// A pod's network per phase (egress-rules.ts for the rules): the worker's egress address (where the egress proxy
// serves allowlist pods, the Docker path's egress-network gateway), the controller a pod is created with, and each
// phase's rules set through the controller over the exec API. Policies for the proxy are keyed by the pod's IP, as on
// Docker by the container's address on the egress network, and checked against the pod holding it.
import type { CoreV1Api, KubeConfig, V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import { createSocket } from 'node:dgram';
import { isIP } from 'node:net';
import { SandboxLost, SeedFailed } from '../errors.ts';
import { EGRESS_NETWORK, type ApplyNetworkOptions, type PhaseNetwork } from '../network-phase.ts';
import type { SandboxHandle } from '../types.ts';
import { execInPod } from './exec.ts';
import { EGRESS_CONTAINER, egressContainer, needsEgressController, rulesScript, startMode, type PodNetworkMode } from './egress-rules.ts';
import { NETWORK_LABEL } from './network-policy.ts';
import { containerStatus, podAndContainer, podWithAddress } from './pod-address.ts';
import { CONTAINER } from './pod-spec.ts';
import { PodNetworkPolicies } from './pod-policies.ts';

/** The local address this host uses toward `ip` (a UDP socket's connect sends nothing; the kernel picks the route). */
export async function localAddressToward(ip: string): Promise<string> {
  const socket = createSocket(isIP(ip) === 6 ? 'udp6' : 'udp4');
  try {
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.connect(9, ip, () => resolve());
    });
    return socket.address().address;
  } finally {
    socket.close();
  }
}

/** A node's address pods surely reach the worker from: its InternalIP, else any address it lists. */
export function nodeAddress(nodes: ReadonlyArray<{ status?: { addresses?: Array<{ type: string; address: string }> } }>): string | null {
  const all = nodes.flatMap((n) => n.status?.addresses ?? []).filter((a) => isIP(a.address) !== 0);
  return (all.find((a) => a.type === 'InternalIP') ?? all[0])?.address ?? null;
}

/** The apiserver's address when it is a routable IP (in a pod: its Service; else the kubeconfig's server), or null. */
export function apiserverAddress(kc: Pick<KubeConfig, 'getCurrentCluster'>, env: NodeJS.ProcessEnv = process.env): string | null {
  const candidates = [env.KUBERNETES_SERVICE_HOST, (() => {
    try {
      return new URL(kc.getCurrentCluster()?.server ?? '').hostname.replace(/^\[(.*)\]$/, '$1');
    } catch {
      return undefined;
    }
  })()];
  return candidates.find((a): a is string => a !== undefined && isIP(a) !== 0 && !/^127\.|^::1$/.test(a)) ?? null;
}

export interface PodEgressOptions {
  kubeConfig: KubeConfig;
  core: CoreV1Api;
  namespace: string;
  /** The controller image's reference in the registry (built and pushed on first need). */
  image?: () => Promise<string>;
  /** Where pods reach this worker; default: this host's address toward the first node. */
  address?: string;
  /** Also keep NetworkPolicy objects (for a CNI that enforces them; the pods' own rules hold either way). */
  networkPolicies?: boolean;
}

/**
 * The seed's failure for a controller that restarted, from its status and what it printed (its termination message
 * or its previous log; '' when neither). The kubelet may count the restart before it fills the last state in (seen:
 * restartCount 1, lastState {}), and the log of the ended instance may not be readable yet: null then, the next look
 * says why, unless the restarts go on without.
 */
export function controllerStartFailure(pod: string, status: V1ContainerStatus, log: string): SeedFailed | null {
  if (!log && !status.lastState?.terminated && (status.restartCount ?? 0) < 3) return null;
  return new SeedFailed('harbor:seed_failed', `the egress controller of pod ${pod} could not set its network: ${log || status.lastState?.terminated?.reason || 'no output'}`, log);
}

export class PodEgress {
  private address: Promise<string> | null = null;
  private readonly policies: PodNetworkPolicies | null;

  constructor(private readonly o: PodEgressOptions) {
    this.policies = o.networkPolicies ? new PodNetworkPolicies(o.kubeConfig, o.namespace) : null;
  }

  /** The worker's address pods reach (the egress proxy listens there; allowlist pods may reach it alone). */
  workerAddress(): Promise<string> {
    if (this.o.address) return Promise.resolve(this.o.address);
    if (!this.address) {
      this.address = (async () => {
        const node = await this.o.core.listNode().then((l) => nodeAddress(l.items), (err: unknown) => {
          if ((err as { code?: number }).code !== 403) throw err;
          return null;
        });
        // A worker that may not list nodes (deploy/kubernetes grants none) routes toward the apiserver instead: in the
        // cluster, its Service address; outside, the kubeconfig's server when that is an address.
        const toward = node ?? apiserverAddress(this.o.kubeConfig);
        if (!toward) throw new Error('cannot tell where pods reach this worker (for allowlist phases): the cluster lists no node address and the apiserver is not at an IP address; set [kubernetes] egress_address in berth.toml to an address of this worker the pods reach');
        return localAddressToward(toward);
      })();
      this.address.catch(() => { this.address = null; });
    }
    return this.address;
  }

  /** The pod with its controller when it needs one, the controller's first rules those of the network it is created on. */
  async withController(pod: V1Pod, spec: { network: string; networkPhases?: boolean }): Promise<V1Pod> {
    if (!needsEgressController(spec)) return pod;
    if (!this.o.image) throw new Error('the Kubernetes sandbox was made without an egress controller image: no-network and allowlist phases need one');
    const mode = startMode(spec.network, EGRESS_NETWORK);
    const gateway = mode === 'allowlist' || this.policies ? await this.workerAddress() : undefined;
    if (this.policies) await this.policies.ensure(gateway!);
    const controller = egressContainer(await this.o.image(), rulesScript(mode, gateway, true));
    return {
      ...pod,
      metadata: { ...pod.metadata, labels: { ...pod.metadata?.labels, ...(this.policies ? { [NETWORK_LABEL]: mode } : {}) } },
      // First: a group's other init containers (its services) start only once the first rules are in.
      spec: { ...pod.spec!, initContainers: [controller, ...(pod.spec?.initContainers ?? [])] },
    };
  }

  /** Sets the pod's rules to `mode` through its controller. */
  async setMode(handle: SandboxHandle, mode: PodNetworkMode): Promise<void> {
    const gateway = mode === 'allowlist' ? await this.workerAddress() : undefined;
    const { pod: podName, container } = podAndContainer(handle.containerId);
    const target = { namespace: this.o.namespace, pod: podName, container: EGRESS_CONTAINER };
    let r;
    try {
      r = await execInPod(this.o.kubeConfig, target, ['/bin/sh', '-c', rulesScript(mode, gateway)]);
    } catch (err) {
      const pod = await this.readPod(podName).catch(() => undefined);
      if (!pod || pod.metadata?.deletionTimestamp || !containerStatus(pod, container)?.state?.running) throw new SandboxLost(handle.name, err);
      if (!pod.spec?.initContainers?.some((c) => c.name === EGRESS_CONTAINER)) {
        throw new Error(`sandbox ${handle.name} (pod ${podName}) was created without an egress controller, so its network cannot change per phase`);
      }
      throw err;
    }
    if (r.exitCode !== 0) throw new Error(`setting sandbox ${handle.name}'s network to ${mode} failed (exit ${r.exitCode}): ${(r.stderr.toString() || r.stdout.toString()).trim()}`);
    // After the rules: a label that widens lags behind them, one that narrows only adds to them.
    await this.policies?.label(podName, mode);
  }

  /** The pod's network put as a create on `network` would have (after overlay RUN lines, which run online). */
  putOnNetwork(handle: SandboxHandle, network: string): Promise<void> {
    return this.setMode(handle, startMode(network, EGRESS_NETWORK));
  }

  /**
   * A phase's network: the proxy's policy for the pod (when it has allowlist phases) and its rules, the narrower of
   * the two always first in place, as on Docker.
   */
  async applyPhase(handle: SandboxHandle, want: PhaseNetwork, opts: ApplyNetworkOptions = {}): Promise<void> {
    // A group's services share its pod's network namespace: main's switch is every service's.
    if (podAndContainer(handle.containerId).container !== CONTAINER) return;
    const egress = opts.egress;
    if (want.mode === 'allowlist' && !egress) throw new Error('an allowlist phase needs the egress network');
    const ip = egress ? await this.podIp(handle) : undefined;
    if (want.mode === 'no-network') {
      await this.setMode(handle, 'no-network');
      if (egress && ip) egress.policies.remove(ip);
      return;
    }
    if (egress && ip) egress.policies.set(ip, { container: handle.containerId, hosts: want.mode === 'allowlist' ? [...want.hosts] : null });
    await this.setMode(handle, want.mode);
  }

  /** Whether pod `pod` holds `ip` now (the proxy's check before it trusts a policy file). */
  async holds(pod: string, ip: string): Promise<boolean> {
    const p = await podWithAddress(() => this.readPod(podAndContainer(pod).pod));
    return p !== undefined && !p.metadata?.deletionTimestamp && (p.status?.podIPs?.some((a) => a.ip === ip) ?? p.status?.podIP === ip);
  }

  /** A controller that could not set the first rules (it restarts, the sandbox never starts): the seed failure, or null. */
  async startFailure(pod: V1Pod): Promise<SeedFailed | null> {
    const status = pod.status?.initContainerStatuses?.find((c) => c.name === EGRESS_CONTAINER);
    if (!status || (status.restartCount ?? 0) === 0) return null;
    const read = (previous: boolean) => this.o.core.readNamespacedPodLog({
      name: pod.metadata!.name!, namespace: this.o.namespace, container: EGRESS_CONTAINER, previous, tailLines: 20,
    }).then((t) => String(t).trim()).catch(() => '');
    // While the controller waits out its restart back-off, the instance that failed last is the current one (the
    // kubelet keeps one ended instance, so "previous" may be gone): its log, when the previous one has none.
    const log = status.lastState?.terminated?.message?.trim() || await read(true) || await read(false);
    return controllerStartFailure(pod.metadata!.name!, status, log);
  }

  private async podIp(handle: SandboxHandle): Promise<string> {
    const pod = await podWithAddress(() => this.readPod(podAndContainer(handle.containerId).pod));
    const ip = pod?.status?.podIP;
    if (!pod || !ip) throw new SandboxLost(handle.name, new Error(`pod ${handle.containerId} has no address`));
    return ip;
  }

  private async readPod(name: string): Promise<V1Pod | undefined> {
    try {
      return await this.o.core.readNamespacedPod({ name, namespace: this.o.namespace });
    } catch (err) {
      if ((err as { code?: number }).code === 404) return undefined;
      throw err;
    }
  }
}
