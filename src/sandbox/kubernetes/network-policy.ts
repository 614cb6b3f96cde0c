// NetworkPolicy as a second layer beside the pod's own iptables rules (egress-rules.ts), for clusters whose CNI
// enforces it (Calico, Cilium, …; the local cluster's bridge CNI does not, so there the rules alone hold). A pod's
// phase is its `berth.network` label; one policy per restricted mode selects the pods in it. The rules stay the
// source of truth: a CNI applies policy asynchronously, and a label changes after the rules have narrowed.
import type { V1NetworkPolicy } from '@kubernetes/client-node';
import { isIP } from 'node:net';
import { MANAGED_LABEL } from './pod-spec.ts';
import type { PodNetworkMode } from './egress-rules.ts';

/** The pod label naming its phase's network mode. */
export const NETWORK_LABEL = 'berth.network';

const hostCidr = (address: string): string => {
  const family = isIP(address);
  if (family === 0) throw new Error(`the egress address ${JSON.stringify(address)} is not an IP address`);
  return `${address}/${family === 4 ? 32 : 128}`;
};

/**
 * The namespace's policies: `berth-no-network` denies every packet in and out of pods labelled no-network;
 * `berth-allowlist` admits only the worker's egress address (the egress proxy) for pods labelled allowlist.
 * Public pods are selected by neither.
 */
export function networkPolicies(namespace: string, egressAddress: string): V1NetworkPolicy[] {
  const select = (mode: PodNetworkMode) => ({ matchLabels: { [MANAGED_LABEL]: 'single', [NETWORK_LABEL]: mode } });
  const worker = [{ ipBlock: { cidr: hostCidr(egressAddress) } }];
  const meta = (name: string) => ({ name, namespace, labels: { [MANAGED_LABEL]: 'policy' } });
  return [
    { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: meta('berth-no-network'),
      spec: { podSelector: select('no-network'), policyTypes: ['Ingress', 'Egress'], ingress: [], egress: [] } },
    { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: meta('berth-allowlist'),
      spec: { podSelector: select('allowlist'), policyTypes: ['Ingress', 'Egress'], ingress: [{ _from: worker }], egress: [{ to: worker }] } },
  ];
}
