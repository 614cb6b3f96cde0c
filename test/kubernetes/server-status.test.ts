import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClusterSlots } from '../../src/host/cluster-slots.ts';
import { hostQueueName } from '../../src/config/queues.ts';
import { SlotLeases } from '../../src/sandbox/kubernetes/slot-leases.ts';
import { berth } from '../helpers/cli.ts';
import { kubernetesConfigFile, ownNamespace, type OwnNamespace } from '../helpers/kubernetes-namespace.ts';
import { FIRST_BUILD_TIMEOUT_MS, useLocalCluster, type LocalCluster } from '../helpers/kubernetes.ts';

// `berth server status` with a Kubernetes sandbox configured (issue 23, "Selecting it": it "shows the cluster, its
// nodes and the pods in use"): the real CLI against the local cluster, in a namespace of this file's own, with one
// slot taken the way a worker takes it.

describe('berth server status with the Kubernetes sandbox', () => {
  let cluster: LocalCluster;
  let ns: OwnNamespace;
  let env: Record<string, string>;

  beforeAll(async () => {
    cluster = await useLocalCluster();
    ns = await ownNamespace(cluster.core, 'status');
    env = { BERTH_CONFIG: kubernetesConfigFile(cluster, ns.name, 5) };
    // One slot held, as a worker of this cluster and namespace holds it (the queue is the cluster's, no suffix).
    const queue = hostQueueName(`kubernetes:${cluster.kubeConfig.getCurrentCluster()!.server}/${ns.name}`);
    expect(await new ClusterSlots(new SlotLeases(cluster.kubeConfig, ns.name, queue, 5, 'the test')).tryReserve('berth/b/t/1', 'run-1')).toBe(true);
  }, FIRST_BUILD_TIMEOUT_MS);
  afterAll(async () => {
    await ns?.remove();
    await cluster?.release();
  }, 180_000);

  it('--json names the cluster, its ready node with what it can allocate, and the slots against max_pods', async () => {
    const r = await berth(['server', 'status', '--json'], env);
    const out = JSON.parse(r.stdout) as { cluster: { cluster: { server: string; version: string; namespace: string; nodes: Array<{ ready: boolean; allocatable: { pods: string } }>; pods: { total: number } }; slots: { in_use: number; capacity: number; bound: string; leases: Array<{ workflow_id: string; state: string }> } } };
    expect(out.cluster.cluster).toMatchObject({ server: cluster.apiserver, version: `v${cluster.version.replace(/^v/, '')}`, namespace: ns.name, pods: { total: 0 } });
    expect(out.cluster.cluster.nodes.length).toBeGreaterThanOrEqual(1);
    expect(out.cluster.cluster.nodes.every((n) => n.ready && Number(n.allocatable.pods) > 0)).toBe(true);
    expect(out.cluster.slots).toMatchObject({ in_use: 1, capacity: 5, leases: [{ workflow_id: 'berth/b/t/1', state: 'held' }] });
    expect(out.cluster.slots.bound).toMatch(/max_pods 5 \(.*berth\.toml \[kubernetes\]\.max_pods\)/);
  }, 120_000);

  it('the text names the cluster, the nodes ready and the slots in use against max_pods', async () => {
    const r = await berth(['server', 'status'], { ...env, NO_COLOR: '1' });
    expect(r.stdout).toContain(`Cluster   ${cluster.apiserver}`);
    expect(r.stdout).toMatch(/Nodes {5}1\/1 ready: \S+ ready \(/);
    expect(r.stdout).toMatch(/Pods {6}0 of Berth's/);
    expect(r.stdout).toMatch(/Slots {5}1\/5 in use, bound by max_pods 5/);
  }, 120_000);
});
