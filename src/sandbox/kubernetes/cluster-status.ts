import { CoreV1Api, VersionApi, type KubeConfig } from '@kubernetes/client-node';
import type { ClusterStatus } from '../cluster-status.ts';
import { SandboxLost } from '../errors.ts';
import { MANAGED_LABEL } from './pod-spec.ts';

/** The cluster's version, its nodes (ready, allocatable) and Berth's pods in `namespace`, asked of the apiserver. */
export async function readClusterStatus(kubeConfig: KubeConfig, namespace: string): Promise<ClusterStatus> {
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const server = kubeConfig.getCurrentCluster()?.server ?? 'unknown';
  let version: string;
  try {
    version = (await kubeConfig.makeApiClient(VersionApi).getCode()).gitVersion;
  } catch (err) {
    throw new SandboxLost(`(kubernetes cluster ${server})`, err);
  }
  const [nodes, pods] = await Promise.all([
    core.listNode().then((l) => ({ items: l.items, error: undefined }), (err: Error & { code?: number }) => ({ items: undefined, error: err.code === 403 ? 'these credentials may not list nodes' : err.message })),
    core.listNamespacedPod({ namespace, labelSelector: MANAGED_LABEL }),
  ]);
  const byPhase: Record<string, number> = {};
  for (const p of pods.items) {
    const phase = p.metadata?.deletionTimestamp ? 'Terminating' : (p.status?.phase ?? 'Unknown');
    byPhase[phase] = (byPhase[phase] ?? 0) + 1;
  }
  return {
    server, version, namespace,
    nodes: nodes.items?.map((n) => ({
      name: n.metadata?.name ?? '?',
      ready: n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false,
      allocatable: { cpu: n.status?.allocatable?.cpu ?? '?', memory: n.status?.allocatable?.memory ?? '?', pods: n.status?.allocatable?.pods ?? '?' },
    })),
    ...(nodes.error ? { nodesError: nodes.error } : {}),
    pods: { total: pods.items.length, byPhase },
  };
}
