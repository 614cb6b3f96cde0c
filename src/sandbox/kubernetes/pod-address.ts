// How a handle names a container of a pod: a single sandbox (and a group's main) by the pod's name alone, its
// container being `main`; any other service of a group as `<pod>/<container>`. Pure.
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
