// `berth server status` for a sandbox on a cluster (docs/kubernetes.md): the cluster, its nodes, Berth's pods, and
// the slots every worker of its queue shares (Leases in the cluster), read the way a worker reads them.
import { loadBerthConfig, type SandboxProviderName } from '../config/berth-config.ts';
import type { ClusterStatus } from '../sandbox/index.ts';
import { ClusterSlots } from './cluster-slots.ts';
import { clusterSlotStore, hostProvider } from './deps.ts';
import { hostIdentity } from './host-identity.ts';

export interface ClusterSandboxStatus {
  cluster: ClusterStatus;
  /** The sandbox queue every worker of this cluster and namespace polls. */
  queue: string;
  slots: {
    in_use: number; capacity: number; bound: string; where: string;
    leases: Array<{ workflow_id: string; state: 'held' | 'leaving'; by: string; since: string }>;
  };
}

/** The cluster of `sandbox` (default berth.toml [sandbox] provider); undefined for a sandbox that is one engine (Docker). */
export async function clusterSandboxStatus(opts: { sandbox?: SandboxProviderName; suffix?: string } = {}): Promise<ClusterSandboxStatus | undefined> {
  const sandbox = opts.sandbox ?? loadBerthConfig().config.sandbox.provider;
  if (sandbox === 'docker') return undefined;
  const provider = hostProvider(sandbox);
  if (!provider.clusterStatus || !provider.slotStore) return undefined;
  const { queue } = await hostIdentity({ provider, ...(opts.suffix ? { suffix: opts.suffix } : {}) });
  const slots = new ClusterSlots((await clusterSlotStore(provider))!);
  const [cluster] = await Promise.all([provider.clusterStatus(), slots.refresh()]);
  return {
    cluster, queue,
    slots: {
      in_use: slots.inUse, capacity: slots.capacity, bound: slots.bound, where: slots.where,
      leases: slots.leases().map((l) => ({
        workflow_id: l.workflowId, state: l.leaving !== undefined ? 'leaving' : 'held', by: l.by, since: new Date(l.leaving ?? l.at).toISOString(),
      })),
    },
  };
}
