import type { Lease } from '../config/slots.ts';

/**
 * The sandbox slots of one sandbox queue, as every activity sees them: in a file under BERTH_HOME that the worker
 * processes of one Docker host share (HostSlots), or in the cluster for a sandbox every worker reaches
 * (ClusterSlots, docs/kubernetes.md). `leases()` and `inUse` are the last view read; `refresh()` reads again.
 */
export interface SandboxSlots {
  /** Where the slots live (a file, or the cluster objects), for status and logs. */
  readonly where: string;
  readonly capacity: number;
  readonly inUse: number;
  leases(): Lease[];
  refresh(): Promise<void>;
  tryReserve(workflowId: string, runId: string, task?: string): Promise<boolean>;
  reservePool(pool: NonNullable<Lease['pool']>): Promise<boolean>;
  takePool(name: string, claimedBy?: string): Promise<boolean>;
  takePooled(workflowId: string): Promise<string | undefined>;
  seeded(workflowId: string, runId: string): Promise<void>;
  vacate(workflowId: string, runId: string, names: string[]): Promise<string | undefined>;
  free(key: string): Promise<void>;
  changed(maxMs: number): Promise<void>;
  close(): void;
}
