// Where a worker's model gateway listens so that the cluster's pods reach it (installed agents call their model
// through it). Pods reach their node's addresses (the node routes its pods' traffic), so a worker on a node listens
// on that node's InternalIP; a worker that runs in a pod itself listens on its pod IP (every pod reaches every other
// pod). BERTH_GATEWAY_HOST, read before this (src/gateway/address.ts), overrides both.
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { networkInterfaces } from 'node:os';

/** A node's addresses as its status lists them (type InternalIP, ExternalIP, Hostname, …). */
export interface NodeAddress {
  readonly type: string;
  readonly address: string;
}

export interface GatewayPlace {
  /** The addresses of this machine (or of the worker's pod), IPv4, loopback excluded. */
  readonly local: readonly string[];
  /** Every node's addresses. */
  readonly nodes: readonly (readonly NodeAddress[])[];
  /** Whether the worker runs in a pod of the cluster (KUBERNETES_SERVICE_HOST is set in every pod). */
  readonly inCluster: boolean;
}

export const GATEWAY_PLACE_HELP = 'set BERTH_GATEWAY_HOST to an address of the worker\'s machine that the cluster\'s pods reach ' +
  '(run the worker on a node, or in a pod of the cluster, to have it found)';

/**
 * The address the gateway listens on: a node InternalIP that is this machine's, else (in a pod) the pod's own
 * address; an Error naming the fix when neither is there (a worker beside a remote cluster).
 */
export function gatewayListenAddress(place: GatewayPlace): string | Error {
  const local = new Set(place.local);
  for (const node of place.nodes) {
    const internal = node.find((a) => a.type === 'InternalIP' && local.has(a.address));
    if (internal) return internal.address;
  }
  if (place.inCluster && place.local.length > 0) return place.local[0]!;
  return new Error(`the model gateway has no address the cluster's pods reach: this machine (${place.local.join(', ') || 'no IPv4 address'}) ` +
    `is not one of the cluster's nodes (${place.nodes.flat().filter((a) => a.type === 'InternalIP').map((a) => a.address).join(', ') || 'none listed'}) ` +
    `and not a pod of it; ${GATEWAY_PLACE_HELP}`);
}

/** This machine's IPv4 addresses, loopback excluded. */
export function localAddresses(): string[] {
  return Object.values(networkInterfaces()).flatMap((list) => (list ?? []).filter((a) => a.family === 'IPv4' && !a.internal).map((a) => a.address));
}

/** The place read from the cluster: its nodes' addresses (none when the credentials may not list nodes) and this machine's. */
export async function readGatewayPlace(kc: KubeConfig, env: Readonly<Record<string, string | undefined>> = process.env): Promise<GatewayPlace> {
  const nodes = await kc.makeApiClient(CoreV1Api).listNode()
    .then((list) => list.items.map((n) => (n.status?.addresses ?? []).map((a) => ({ type: a.type, address: a.address }))))
    .catch((err: unknown) => {
      if ((err as { code?: number }).code === 403) return []; // a worker whose role may not list nodes (deploy/kubernetes): its pod IP serves
      throw err;
    });
  return { local: localAddresses(), nodes, inCluster: Boolean(env['KUBERNETES_SERVICE_HOST']) };
}
