/** A cluster as `berth server status` shows it (docs/kubernetes.md): its apiserver, its nodes and Berth's pods. */
export interface ClusterStatus {
  server: string;
  version: string;
  namespace: string;
  /** Its nodes; undefined when the credentials may not list them (a worker's Role is per namespace), with why. */
  nodes: Array<{ name: string; ready: boolean; allocatable: { cpu: string; memory: string; pods: string } }> | undefined;
  nodesError?: string;
  /** Berth's pods in the namespace now (a sandbox each), by phase. */
  pods: { total: number; byPhase: Record<string, number> };
}
