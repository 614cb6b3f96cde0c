// GPUs on Kubernetes (Task Folder Format § Environment: `gpus`): a pod asks for `nvidia.com/gpu` (pod-spec.ts), which
// only a node running NVIDIA's device plugin advertises. A cluster none of whose nodes has any allocatable is refused
// at prepare, before any pod is made, as an engine without GPUs is on Docker.
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import type { GpuSupport } from '../types.ts';

export const GPU_RESOURCE = 'nvidia.com/gpu';

export interface NodeResources {
  readonly name: string;
  readonly allocatable: Readonly<Record<string, string>>;
}

/** Ok when some node has `nvidia.com/gpu` to allocate; else the reason, naming the resource. */
export function gpuSupportOfNodes(nodes: readonly NodeResources[]): GpuSupport {
  const withGpus = nodes.filter((n) => Number(n.allocatable[GPU_RESOURCE] ?? 0) > 0);
  if (withGpus.length > 0) return { ok: true };
  return {
    ok: false,
    reason: `no node of the Kubernetes cluster has ${GPU_RESOURCE} to allocate (${nodes.length === 0 ? 'no nodes listed' : `nodes: ${nodes.map((n) => n.name).join(', ')}`}; ` +
      'GPU nodes need NVIDIA\'s device plugin)',
  };
}

/**
 * Read from the cluster's nodes. A worker whose role may not list nodes (deploy/kubernetes) cannot tell: the pod is
 * made and the scheduler decides (a pod no node can take stays Pending and fails its seed when the start budget ends).
 */
export async function clusterGpuSupport(kc: KubeConfig): Promise<GpuSupport> {
  try {
    const nodes = (await kc.makeApiClient(CoreV1Api).listNode()).items;
    return gpuSupportOfNodes(nodes.map((n) => ({ name: n.metadata?.name ?? '?', allocatable: n.status?.allocatable ?? {} })));
  } catch (err) {
    if ((err as { code?: number }).code === 403) return { ok: true };
    throw err;
  }
}
