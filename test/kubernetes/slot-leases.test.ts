import { CoordinationV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClusterSlots } from '../../src/host/cluster-slots.ts';
import { SLOTS_LABEL, SlotLeases, scopeTag } from '../../src/sandbox/kubernetes/slot-leases.ts';
import type { SlotStore } from '../../src/sandbox/slot-store.ts';
import { ownNamespace, type OwnNamespace } from '../helpers/kubernetes-namespace.ts';
import { FIRST_BUILD_TIMEOUT_MS, useLocalCluster, type LocalCluster } from '../helpers/kubernetes.ts';

// The sandbox slots of one cluster's queue, kept as Leases in the real cluster (issue 23, "Scheduling and slots":
// max_pods and namespace quotas bound a batch, any number of workers share them; docs/kubernetes.md, Sandbox queues
// on Kubernetes). Two ClusterSlots on one store scope stand for two workers on different machines: they share
// nothing but the apiserver.

describe('slots as Leases on the local cluster', () => {
  let cluster: LocalCluster;
  let ns: OwnNamespace;
  const store = (scope: string, max: number) => new SlotLeases(cluster.kubeConfig, ns.name, scope, max, 'the test');
  const leases = async (scope: string) => (await cluster.kubeConfig.makeApiClient(CoordinationV1Api)
    .listNamespacedLease({ namespace: ns.name, labelSelector: `${SLOTS_LABEL}=${scopeTag(scope)}` })).items;

  beforeAll(async () => {
    cluster = await useLocalCluster();
    ns = await ownNamespace(cluster.core, 'slots');
  }, FIRST_BUILD_TIMEOUT_MS);
  afterAll(async () => {
    await ns?.remove();
    await cluster?.release();
  }, 180_000);

  it('twelve episodes asking two workers at once get exactly max_pods slots, one each, and asking again is idempotent', async () => {
    const a = new ClusterSlots(store('race', 3));
    const b = new ClusterSlots(store('race', 3));
    const asks = Array.from({ length: 12 }, (_, i) => (i % 2 ? a : b).tryReserve(`wf-${i}`, `run-${i}`));
    const got = await Promise.all(asks);
    expect(got.filter(Boolean)).toHaveLength(3);
    expect(await leases('race')).toHaveLength(3);
    const winners = got.flatMap((ok, i) => (ok ? [`wf-${i}`] : []));
    // The holders are the winners, each once; a winner asking through the other worker keeps its slot.
    await b.refresh();
    expect(b.leases().map((l) => l.workflowId).sort()).toEqual([...winners].sort());
    for (const w of winners) expect(await a.tryReserve(w, `run-${w.slice(3)}`)).toBe(true);
    expect(await b.tryReserve('wf-late', 'run')).toBe(false);
    expect(await leases('race')).toHaveLength(3);
  }, 60_000);

  it('a torn-down episode holds its slot as leaving until it is freed; then another episode takes it', async () => {
    const a = new ClusterSlots(store('leave', 1));
    const b = new ClusterSlots(store('leave', 1));
    expect(await a.tryReserve('wf-1', 'r1')).toBe(true);
    await a.seeded('wf-1', 'r1');
    const key = await b.vacate('wf-1', 'r1', ['pod-of-wf-1']);
    expect(key).toBe('wf-1/r1');
    expect(await b.vacate('wf-1', 'r1', [])).toBe(key);
    expect(await a.tryReserve('wf-2', 'r2')).toBe(false);
    await a.refresh();
    expect(a.leases()).toMatchObject([{ key, workflowId: 'wf-1', names: ['pod-of-wf-1'] }]);
    expect(a.leases()[0]!.leaving).toBeGreaterThan(0);
    await b.free(key!);
    expect(await a.tryReserve('wf-2', 'r2')).toBe(true);
    expect((await leases('leave')).map((l) => l.spec?.holderIdentity)).toEqual(['wf-2']);
  }, 60_000);

  it('a seed whose slot was freed meanwhile takes one again, past max_pods (its pod is being made)', async () => {
    const a = new ClusterSlots(store('past', 1));
    expect(await a.tryReserve('wf-1', 'r1')).toBe(true);
    await a.seeded('wf-2', 'r2');
    expect((await leases('past')).map((l) => l.spec?.holderIdentity).sort()).toEqual(['wf-1', 'wf-2']);
    await a.refresh();
    expect(a.inUse).toBe(2);
  }, 60_000);

  /** The store, with how many times each of its calls was made. */
  const counted = (scope: string, max: number) => {
    const inner = store(scope, max);
    const calls = { list: 0, create: 0, update: 0, remove: 0 };
    const count = <T>(k: keyof typeof calls, p: Promise<T>) => { calls[k]++; return p; };
    const wrapped: SlotStore = {
      where: inner.where, maxSlots: inner.maxSlots, maxFrom: inner.maxFrom, quotaRoom: () => inner.quotaRoom(),
      list: () => count('list', inner.list()), create: (n, h, d) => count('create', inner.create(n, h, d)),
      update: (r, h, d) => count('update', inner.update(r, h, d)), remove: (r) => count('remove', inner.remove(r)),
    };
    return { store: wrapped, calls };
  };

  it('sixteen episodes asking one worker at once each get a slot at the first try: one create each, none lost to a sibling (issue 40)', async () => {
    const { store: s, calls } = counted('crowd', 20);
    const a = new ClusterSlots(s);
    const got = await Promise.all(Array.from({ length: 16 }, (_, i) => a.tryReserve(`wf-${i}`, `run-${i}`)));
    expect(got).toEqual(Array.from({ length: 16 }, () => true));
    expect(calls.create).toBe(16);
    const taken = (await leases('crowd')).map((l) => l.spec?.holderIdentity).sort();
    expect(taken).toEqual(Array.from({ length: 16 }, (_, i) => `wf-${i}`).sort());
  }, 60_000);

  it('seed, teardown and free of an episode this worker reserved change its Lease without listing first, and another worker sees each change (issue 40)', async () => {
    const { store: s, calls } = counted('own', 2);
    const a = new ClusterSlots(s);
    const b = new ClusterSlots(store('own', 2));
    expect(await a.tryReserve('wf-1', 'r1')).toBe(true);
    const listed = calls.list;
    await a.seeded('wf-1', 'r1');
    await b.refresh();
    expect(b.leases()).toMatchObject([{ key: 'wf-1', runId: 'r1' }]);
    expect(b.leases()[0]!.seeded).toBeGreaterThan(0);
    expect(await a.vacate('wf-1', 'r1', ['pod-1'])).toBe('wf-1/r1');
    await b.refresh();
    expect(b.leases()).toMatchObject([{ key: 'wf-1/r1', names: ['pod-1'] }]);
    await a.free('wf-1/r1');
    expect(await leases('own')).toEqual([]);
    expect(calls.list).toBe(listed);
    expect(a.inUse).toBe(0);
    // A record changed by another worker since: the change fails on its version, and the next round reads.
    expect(await a.tryReserve('wf-2', 'r2')).toBe(true);
    await b.seeded('wf-2', 'r2');
    expect(await a.vacate('wf-2', 'r2', [])).toBe('wf-2/r2');
    await b.refresh();
    expect(b.leases()).toMatchObject([{ key: 'wf-2/r2' }]);
    expect(b.leases()[0]!.seeded).toBeGreaterThan(0);
  }, 60_000);

  it('a pod quota on the namespace bounds the slots below max_pods, and the bound says which', async () => {
    await cluster.core.createNamespacedResourceQuota({ namespace: ns.name, body: { metadata: { name: 'two-pods' }, spec: { hard: { pods: '2' } } } });
    try {
      const a = new ClusterSlots(store('quota', 5));
      const got = [await a.tryReserve('q-1', 'r'), await a.tryReserve('q-2', 'r'), await a.tryReserve('q-3', 'r')];
      expect(got).toEqual([true, true, false]);
      expect(a.capacity).toBe(2);
      expect(a.bound).toBe(`ResourceQuota ${ns.name}/two-pods (pods: 2)`);
    } finally {
      await cluster.core.deleteNamespacedResourceQuota({ name: 'two-pods', namespace: ns.name });
    }
  }, 60_000);
});
