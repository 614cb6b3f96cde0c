import { describe, expect, it } from 'vitest';
import type { SingleSandboxSpec } from '../../src/sandbox/driver.ts';
import { GPU_RESOURCE, gpuSupportOfNodes } from '../../src/sandbox/kubernetes/gpu-nodes.ts';
import { singlePod } from '../../src/sandbox/kubernetes/pod-spec.ts';

// GPUs on Kubernetes (Task Folder Format § Environment: `gpus`; issue 23: "GPUs as nvidia.com/gpu where the
// cluster has them"). This machine has no GPU node, so the refusal and the pod spec are pinned here.

const spec = (over: Partial<SingleSandboxSpec> = {}): SingleSandboxSpec => ({
  name: 'berth-gpu-agent-0123456789ab', labels: { batch: 'b', workflowId: 'berth/b/t/1', role: 'agent' }, image: 'r/berth/x@sha256:00',
  keepAlive: ['sh', '-c', 'exec sleep infinity'], env: {}, user: 'root', workdir: '/app', network: 'bridge', ...over,
});

describe('whether the cluster has GPUs', () => {
  it.each<[string, Array<{ name: string; allocatable: Record<string, string> }>, boolean, RegExp?]>([
    ['a node with the device plugin', [{ name: 'cpu-1', allocatable: { cpu: '8' } }, { name: 'gpu-1', allocatable: { cpu: '8', [GPU_RESOURCE]: '4' } }], true],
    ['nodes without nvidia.com/gpu (this machine)', [{ name: 'berth-node', allocatable: { cpu: '2', memory: '8Gi' } }], false, /no node of the Kubernetes cluster has nvidia\.com\/gpu to allocate \(nodes: berth-node; GPU nodes need NVIDIA's device plugin\)/],
    ['a GPU node whose GPUs are all unhealthy', [{ name: 'gpu-1', allocatable: { [GPU_RESOURCE]: '0' } }], false, /nodes: gpu-1/],
    ['no nodes', [], false, /no nodes listed/],
  ])('%s', (_what, nodes, ok, reason) => {
    const got = gpuSupportOfNodes(nodes);
    expect(got.ok).toBe(ok);
    if (!got.ok) expect(got.reason).toMatch(reason!);
  });
});

describe('a pod asking for GPUs', () => {
  it('requests and limits nvidia.com/gpu equally (an extended resource takes no overcommit)', () => {
    const resources = singlePod(spec({ gpus: 2, cpus: 1.5, memoryMb: 512 })).spec!.containers[0]!.resources!;
    expect(resources.limits).toEqual({ cpu: '1500m', memory: '512Mi', [GPU_RESOURCE]: '2' });
    expect(resources.requests).toEqual(resources.limits);
  });

  it('asks for none without gpus', () => {
    expect(singlePod(spec({ cpus: 1 })).spec!.containers[0]!.resources!.limits).toEqual({ cpu: '1000m' });
    expect(singlePod(spec()).spec!.containers[0]!.resources).toBeUndefined();
  });
});
