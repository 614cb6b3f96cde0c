// The Kubernetes provider's network part: pods reach the worker's address (the gateway, the egress proxy) and no
// engine network exists, so egress is the worker's address and phases switch the pod's NetworkPolicy rules.
import { createHash } from 'node:crypto';
import { CoreV1Api } from '@kubernetes/client-node';
import { SandboxLost } from '../errors.ts';
import { EGRESS_NETWORK } from '../network-phase.ts';
import type { SandboxNetwork } from '../provider.ts';
import type { KubernetesDriver } from './driver.ts';
import { gatewayListenAddress, readGatewayPlace } from './gateway-address.ts';
import { podWithAddress } from './pod-address.ts';

export function kubernetesNetwork(driver: KubernetesDriver, egressAddress: string | undefined): SandboxNetwork {
  return {
    /** No engine network: allowlist pods reach the worker's address alone (their rules), where the egress proxy serves. */
    egress: async () => {
      const { id } = await driver.engineIdentity();
      return { id: createHash('sha256').update(id).digest('hex'), name: EGRESS_NETWORK, gateway: await driver.egress.workerAddress() };
    },
    /** The pod's IP (every pod and a worker on a node reach it); null while it has none. */
    address: async (container) => {
      const core = driver.kubeConfig.makeApiClient(CoreV1Api);
      const pod = await podWithAddress(() => core.readNamespacedPod({ name: container, namespace: driver.namespace })
        .catch((err: unknown) => { throw new SandboxLost(container, err); }));
      return pod?.status?.podIP ?? null;
    },
    holds: (_network, ip, container) => driver.egress.holds(container, ip),
    applyPhase: (handle, want, opts) => driver.egress.applyPhase(handle, want, opts),
    /**
     * Where the model gateway listens for pods: [kubernetes].egress_address when set (the one address an allowlist pod
     * reaches), else this machine's node address, or the worker's pod IP (gateway-address.ts).
     */
    defaultRanges: async () => {
      if (egressAddress) return [{ gateway: egressAddress, subnet: null }];
      const address = gatewayListenAddress(await readGatewayPlace(driver.kubeConfig));
      if (address instanceof Error) throw address;
      return [{ gateway: address, subnet: null }];
    },
  };
}
