// The slots of one sandbox queue as Leases (coordination.k8s.io/v1) in the cluster's namespace: Lease
// `berth-slot-<scope hash>-<n>` is slot n, so two workers (on any machines) taking the same slot race on one create
// and only one wins. Its holderIdentity is the slot key, its annotation the activities' data; a change carries the
// resourceVersion it read, so a concurrent change fails instead of being lost.
import { CoordinationV1Api, CoreV1Api, type KubeConfig, type V1Lease } from '@kubernetes/client-node';
import { createHash } from 'node:crypto';
import { SandboxLost } from '../errors.ts';
import type { SlotRecord, SlotStore } from '../slot-store.ts';
import { MANAGED_LABEL } from './pod-spec.ts';

export const SLOTS_LABEL = 'berth.slots';
/** [kubernetes].max_pods when berth.toml does not set it (docs/kubernetes.md). */
export const DEFAULT_MAX_PODS = 64;
const DATA_ANNOTATION = 'berth.slot';
const SCOPE_ANNOTATION = 'berth.queue';
const CLUSTER = '(kubernetes cluster: slot leases)';

function statusCode(err: unknown): number | undefined {
  return (err as { code?: number }).code;
}

/** The label value (and Lease name part) of a scope (a sandbox queue's name): a hash, as queue names may be long. */
export const scopeTag = (scope: string): string => createHash('sha256').update(scope).digest('hex').slice(0, 12);

/** The pods a quota's `hard` bounds: `pods`, else `count/pods`. */
export function hardPods(hard: Record<string, string> | undefined): number | undefined {
  const v = hard?.pods ?? hard?.['count/pods'];
  return v === undefined ? undefined : Number(v);
}

export class SlotLeases implements SlotStore {
  readonly where: string;
  private readonly tag: string;
  private readonly coordination: CoordinationV1Api;
  private readonly core: CoreV1Api;

  constructor(kubeConfig: KubeConfig, readonly namespace: string, readonly scope: string, readonly maxSlots: number, readonly maxFrom: string) {
    this.tag = scopeTag(scope);
    this.where = `Leases in namespace ${namespace} labelled ${SLOTS_LABEL}=${this.tag}`;
    this.coordination = kubeConfig.makeApiClient(CoordinationV1Api);
    this.core = kubeConfig.makeApiClient(CoreV1Api);
  }

  private leaseName(slot: number): string {
    return `berth-slot-${this.tag}-${slot}`;
  }

  private record(l: V1Lease): SlotRecord | undefined {
    const slot = Number(l.metadata?.name?.slice(this.leaseName(0).length - 1));
    if (!Number.isInteger(slot) || l.metadata?.deletionTimestamp) return undefined;
    return { slot, holder: l.spec?.holderIdentity ?? '', data: l.metadata?.annotations?.[DATA_ANNOTATION] ?? '{}', version: l.metadata?.resourceVersion ?? '' };
  }

  private body(slot: number, holder: string, data: string, version?: string): V1Lease {
    return {
      apiVersion: 'coordination.k8s.io/v1', kind: 'Lease',
      metadata: {
        name: this.leaseName(slot), namespace: this.namespace, labels: { [SLOTS_LABEL]: this.tag },
        annotations: { [DATA_ANNOTATION]: data, [SCOPE_ANNOTATION]: this.scope }, ...(version ? { resourceVersion: version } : {}),
      },
      // No acquireTime/renewTime (client-node sends them in milliseconds where the apiserver wants microseconds): when it
      // was taken is in the data, and a slot is never given up by time alone (its episode is durable).
      spec: { holderIdentity: holder },
    };
  }

  async list(): Promise<SlotRecord[]> {
    try {
      const items = (await this.coordination.listNamespacedLease({ namespace: this.namespace, labelSelector: `${SLOTS_LABEL}=${this.tag}` })).items;
      return items.map((l) => this.record(l)).filter((r): r is SlotRecord => r !== undefined).sort((a, b) => a.slot - b.slot);
    } catch (err) {
      throw new SandboxLost(CLUSTER, err);
    }
  }

  async create(slot: number, holder: string, data: string): Promise<SlotRecord | undefined> {
    try {
      return this.record(await this.coordination.createNamespacedLease({ namespace: this.namespace, body: this.body(slot, holder, data) }));
    } catch (err) {
      if (statusCode(err) === 409) return undefined;
      throw new SandboxLost(CLUSTER, err);
    }
  }

  async update(record: SlotRecord, holder: string, data: string): Promise<SlotRecord | undefined> {
    try {
      return this.record(await this.coordination.replaceNamespacedLease({ name: this.leaseName(record.slot), namespace: this.namespace, body: this.body(record.slot, holder, data, record.version) }));
    } catch (err) {
      if (statusCode(err) === 409 || statusCode(err) === 404) return undefined;
      throw new SandboxLost(CLUSTER, err);
    }
  }

  async remove(record: SlotRecord): Promise<boolean> {
    try {
      await this.coordination.deleteNamespacedLease({ name: this.leaseName(record.slot), namespace: this.namespace, body: { preconditions: { resourceVersion: record.version } } });
      return true;
    } catch (err) {
      // Gone already; or changed since it was read (a newer holder's; the caller reads again).
      if (statusCode(err) === 404) return true;
      if (statusCode(err) === 409) return false;
      throw new SandboxLost(CLUSTER, err);
    }
  }

  async quotaRoom(): Promise<{ room: number; quota: string } | undefined> {
    try {
      const quotas = (await this.core.listNamespacedResourceQuota({ namespace: this.namespace })).items
        .map((q) => ({ name: q.metadata?.name ?? '?', hard: hardPods(q.spec?.hard), used: hardPods(q.status?.used) ?? 0 }))
        .filter((q): q is { name: string; hard: number; used: number } => q.hard !== undefined);
      if (quotas.length === 0) return undefined;
      const ours = (await this.core.listNamespacedPod({ namespace: this.namespace, labelSelector: MANAGED_LABEL })).items
        .filter((p) => p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed').length;
      const rooms = quotas.map((q) => ({ room: Math.max(0, q.hard - Math.max(0, q.used - ours)), quota: `ResourceQuota ${this.namespace}/${q.name} (pods: ${q.hard})` }));
      return rooms.reduce((a, b) => (b.room < a.room ? b : a));
    } catch (err) {
      throw new SandboxLost(CLUSTER, err);
    }
  }
}
