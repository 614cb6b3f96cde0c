// The NetworkPolicy layer (network-policy.ts) on a cluster that enforces it: the namespace's two policies made or
// replaced once per worker, and each pod's `berth.network` label set to its phase's mode after its own rules.
import { CoreV1Api, NetworkingV1Api, PatchStrategy, setHeaderOptions, type KubeConfig } from '@kubernetes/client-node';
import type { PodNetworkMode } from './egress-rules.ts';
import { NETWORK_LABEL, networkPolicies } from './network-policy.ts';

export class PodNetworkPolicies {
  private made: Promise<void> | null = null;
  private readonly networking: NetworkingV1Api;
  private readonly core: CoreV1Api;

  constructor(kc: KubeConfig, private readonly namespace: string) {
    this.networking = kc.makeApiClient(NetworkingV1Api);
    this.core = kc.makeApiClient(CoreV1Api);
  }

  /** The namespace's policies for pods reaching the worker at `egressAddress` (create, or replace a stale one). */
  ensure(egressAddress: string): Promise<void> {
    if (!this.made) {
      this.made = (async () => {
        for (const body of networkPolicies(this.namespace, egressAddress)) {
          const name = body.metadata!.name!;
          try {
            await this.networking.createNamespacedNetworkPolicy({ namespace: this.namespace, body });
          } catch (err) {
            if ((err as { code?: number }).code !== 409) throw new Error(`creating NetworkPolicy ${this.namespace}/${name} failed (the worker needs create and update on networkpolicies): ${(err as Error).message}`);
            await this.networking.replaceNamespacedNetworkPolicy({ name, namespace: this.namespace, body });
          }
        }
      })();
      this.made.catch(() => { this.made = null; });
    }
    return this.made;
  }

  /** The pod's label for its phase (the policies select by it). */
  async label(pod: string, mode: PodNetworkMode): Promise<void> {
    await this.core.patchNamespacedPod(
      { name: pod, namespace: this.namespace, body: { metadata: { labels: { [NETWORK_LABEL]: mode } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  }
}
