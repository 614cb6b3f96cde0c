import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DockerSandboxProvider, KubernetesSandboxProvider, prepareAgentImage } from '../../src/sandbox/index.ts';
import { loadTask } from '../../src/task/index.ts';
import { FIRST_BUILD_TIMEOUT_MS, useLocalCluster, type LocalCluster } from '../helpers/kubernetes.ts';
import { BASE_TOML, echoTask, writeDataset } from '../helpers/tasks.ts';

// GPUs on the Kubernetes sandbox (Task Folder Format § Environment: `gpus`): the local cluster's node has no
// nvidia.com/gpu, so a task asking for one is refused at prepare, naming the resource, before any episode starts.

describe('GPUs on the local cluster (which has none)', () => {
  let cluster: LocalCluster;
  let provider: KubernetesSandboxProvider;

  beforeAll(async () => {
    cluster = await useLocalCluster();
    provider = new KubernetesSandboxProvider({ kubeConfig: cluster.kubeConfig, local: new DockerSandboxProvider(new Docker()), registryHost: cluster.registry });
  }, FIRST_BUILD_TIMEOUT_MS);

  afterAll(async () => {
    await cluster?.release();
  });

  it('says no node has nvidia.com/gpu, naming the node', async () => {
    expect(await provider.gpuSupport()).toEqual({ ok: false, reason: expect.stringMatching(new RegExp(`no node of the Kubernetes cluster has nvidia\\.com/gpu to allocate \\(nodes: ${cluster.node};`)) as string });
  });

  it('refuses a task asking for a GPU at prepare, naming the file, the key and the fix', async () => {
    const root = writeDataset(echoTask('gpu', 'ok', BASE_TOML.replace('workdir = "/app"\n', 'workdir = "/app"\ngpus = 1\n')));
    const task = await loadTask(`${root}/gpu`, { datasetRoot: root });
    await expect(prepareAgentImage(provider, task, {})).rejects.toThrow(
      new RegExp(`${root}/gpu/task.toml: \\[environment\\]\\.gpus = 1, but no node of the Kubernetes cluster has nvidia\\.com/gpu.*NVIDIA's device plugin\\), or remove \\[environment\\]\\.gpus`),
    );
  }, 120_000);
});
