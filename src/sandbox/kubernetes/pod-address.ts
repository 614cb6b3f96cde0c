// How a handle names a container of a pod: a single sandbox (and a group's main) by the pod's name alone, its
// container being `main`; any other service of a group as `<pod>/<container>`; and a pod read until its status has its IP.
import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import { CONTAINER } from './pod-spec.ts';

export function podAndContainer(containerId: string): { pod: string; container: string } {
  const at = containerId.indexOf('/');
  return at < 0 ? { pod: containerId, container: CONTAINER } : { pod: containerId.slice(0, at), container: containerId.slice(at + 1) };
}

export const serviceContainerId = (pod: string, container: string): string => (container === CONTAINER ? pod : `${pod}/${container}`);

/** A container's status, init containers (a group's sidecars and main) included. */
export function containerStatus(pod: V1Pod | undefined, container: string): V1ContainerStatus | undefined {
  return [...(pod?.status?.initContainerStatuses ?? []), ...(pod?.status?.containerStatuses ?? [])].find((c) => c.name === container);
}

/** How long a pod that runs but has no IP in its status yet is read again for one. */
export const ADDRESS_WAIT_MS = 5000;

/**
 * The pod as `read` answers it, once its status has an IP: the kubelet writes a new pod's IP at a relist, which can
 * come after the pod was seen ready (its container answering an exec, driver.ts), so a pod without one is read again
 * for up to `waitMs`. A pod that is gone or ending is answered as it is.
 */
export async function podWithAddress(read: () => Promise<V1Pod | undefined>, waitMs = ADDRESS_WAIT_MS): Promise<V1Pod | undefined> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const pod = await read();
    if (!pod || pod.status?.podIP || pod.metadata?.deletionTimestamp || Date.now() >= deadline) return pod;
    const phase = pod.status?.phase;
    if (phase === 'Failed' || phase === 'Succeeded') return pod;
    await new Promise((r) => setTimeout(r, 100));
  }
}
