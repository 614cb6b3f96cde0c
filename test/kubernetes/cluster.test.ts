import type { V1Pod } from '@kubernetes/client-node';
import Docker from 'dockerode';
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execInPod, getArchiveFromPod, putArchiveInPod, type PodContainer } from '../../src/sandbox/kubernetes/exec.ts';
import { FIRST_BUILD_TIMEOUT_MS, pushByDigest, useLocalCluster, waitForPodGone, waitForPodRunning, type LocalCluster } from '../helpers/kubernetes.ts';
import { entriesOf, tarOf } from '../helpers/tar.ts';

// The local single-node cluster (npm run setup -- kubernetes; issue 23) asked as a driver will ask it: an image
// built by the local Docker engine, pushed to the cluster's registry and pulled by digest; exec through the
// Kubernetes exec API; files as tar over exec (as `kubectl cp`); the pod deleted.

const suffix = randomBytes(4).toString('hex');
const namespace = 'default';
const podName = `berth-cluster-test-${suffix}`;
let cluster: LocalCluster;
const docker = new Docker();
let imageTag = '';
let byDigest = '';

/** Builds a small image on berth-base:bookworm with the local engine and pushes it; returns `repo@sha256:…`. */
async function buildAndPush(registry: string): Promise<string> {
  const context = await tarOf({
    Dockerfile: 'FROM berth-base:bookworm\nRUN echo built-by-docker > /marker\nCMD ["sleep", "infinity"]\n',
  });
  const repo = `${registry}/berth-test/cluster-${suffix}`;
  imageTag = `${repo}:1`;
  const build = await docker.buildImage(Readable.from([context]), { t: imageTag });
  await new Promise<void>((resolve, reject) => docker.modem.followProgress(build, (err, out) => {
    const failed = (out ?? []).find((m: { error?: string }) => m.error);
    if (err || failed) reject(err ?? new Error(failed.error)); else resolve();
  }));
  return pushByDigest(docker, imageTag);
}

const main: () => PodContainer = () => ({ namespace, pod: podName, container: 'main' });

describe('the local Kubernetes cluster', () => {
  beforeAll(async () => {
    cluster = await useLocalCluster();
  }, FIRST_BUILD_TIMEOUT_MS);

  afterAll(async () => {
    await cluster?.core.deleteNamespacedPod({ name: podName, namespace, gracePeriodSeconds: 0 }).catch(() => undefined);
    if (imageTag) await docker.getImage(imageTag).remove().catch(() => undefined);
    await cluster?.release();
  }, 120_000);

  it('has its one node Ready, at the version it was built as', async () => {
    const nodes = (await cluster.core.listNode()).items;
    expect(nodes.map((n) => n.metadata?.name)).toEqual([cluster.node]);
    const ready = nodes[0]!.status?.conditions?.find((c) => c.type === 'Ready');
    expect(ready?.status).toBe('True');
    expect(nodes[0]!.status?.nodeInfo?.kubeletVersion).toBe(cluster.version);
  });

  it('runs a pod from an image the local engine built, pulled from the registry by digest', async () => {
    byDigest = await buildAndPush(cluster.registry);
    expect(byDigest).toMatch(/@sha256:[0-9a-f]{64}$/);
    const pod: V1Pod = {
      metadata: { name: podName, labels: { 'berth.test': suffix } },
      spec: {
        restartPolicy: 'Never',
        terminationGracePeriodSeconds: 0,
        containers: [{ name: 'main', image: byDigest, imagePullPolicy: 'IfNotPresent' }],
      },
    };
    await cluster.core.createNamespacedPod({ namespace, body: pod });
    const running = await waitForPodRunning(cluster.core, namespace, podName);
    const status = running.status!.containerStatuses![0]!;
    expect(status.imageID).toContain(byDigest.split('@')[1]);
    expect(running.status?.podIP).toMatch(/^10\.229\./);
  });

  it('execs in the pod: output, exit codes, stdin', async () => {
    const marker = await execInPod(cluster.kubeConfig, main(), ['cat', '/marker']);
    expect(marker).toMatchObject({ exitCode: 0 });
    expect(marker.stdout.toString()).toBe('built-by-docker\n');
    const both = await execInPod(cluster.kubeConfig, main(), ['sh', '-c', 'echo out; echo err >&2; exit 7']);
    expect({ code: both.exitCode, out: both.stdout.toString(), err: both.stderr.toString() }).toEqual({ code: 7, out: 'out\n', err: 'err\n' });
    const echoed = await execInPod(cluster.kubeConfig, main(), ['wc', '-c'], Buffer.from('x'.repeat(100_000)));
    expect(echoed.stdout.toString().trim()).toBe('100000');
  });

  it('copies files in and out as tar over exec, as kubectl cp does', async () => {
    const files = { 'hello.txt': 'hello from the host\n', 'sub/deeper.txt': 'nested\n' };
    await putArchiveInPod(cluster.kubeConfig, main(), '/tmp/in/new', await tarOf(files));
    const listed = await execInPod(cluster.kubeConfig, main(), ['cat', '/tmp/in/new/hello.txt', '/tmp/in/new/sub/deeper.txt']);
    expect(listed.stdout.toString()).toBe('hello from the host\nnested\n');
    await execInPod(cluster.kubeConfig, main(), ['sh', '-c', 'echo made in the pod > /tmp/in/new/sub/out.txt']);
    const back = await entriesOf(await getArchiveFromPod(cluster.kubeConfig, main(), '/tmp/in/new/sub'));
    expect(back).toEqual({ 'sub/': null, 'sub/deeper.txt': 'nested\n', 'sub/out.txt': 'made in the pod\n' });
    await expect(getArchiveFromPod(cluster.kubeConfig, main(), '/tmp/in/missing')).rejects.toThrow(/exited 2/);
  });

  it('deletes the pod, and an exec in it then fails', async () => {
    await cluster.core.deleteNamespacedPod({ name: podName, namespace, gracePeriodSeconds: 0 });
    await waitForPodGone(cluster.core, namespace, podName);
    await expect(execInPod(cluster.kubeConfig, main(), ['true'])).rejects.toThrow(/exec in default\//);
  });
});
