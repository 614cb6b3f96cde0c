import { Client, Connection } from '@temporalio/client';
import Docker from 'dockerode';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { temporalAddress } from '../../src/config/temporal.ts';
import { containerName, DockerSandboxProvider, KubernetesSandboxProvider, SandboxLost, type SandboxHandle, type SandboxSpec } from '../../src/sandbox/index.ts';
import { registryRepository, registryTag } from '../../src/sandbox/registry-images.ts';
import { temporalLiveness } from '../../src/worker.ts';
import { FIRST_BUILD_TIMEOUT_MS, useLocalCluster, waitForPodGone, type LocalCluster } from '../helpers/kubernetes.ts';
import { startDetached } from '../../src/sandbox/detached.ts';

// The sandbox provider on the Kubernetes driver (issue 23; docs/kubernetes.md "What is left" 1 and 2) on the local
// cluster: the base image pushed by the local engine and pinned by digest, a seed with env, workdir and uploads,
// exec, detached processes, files in and out, the pod's log, teardown, and the janitor after a dead worker.

const suffix = randomBytes(4).toString('hex');
const docker = new Docker();
let cluster: LocalCluster;
let provider: KubernetesSandboxProvider;
let image = '';
const made: string[] = [];

function spec(workflowId: string, overrides: Partial<SandboxSpec> = {}): SandboxSpec {
  const name = containerName(workflowId, randomBytes(4).toString('hex'), 'agent');
  made.push(name);
  return { name, labels: { batch: `k8s-provider-${suffix}`, workflowId, role: 'agent' }, image, env: {}, network: 'bridge', ...overrides };
}

describe('KubernetesSandboxProvider on the local cluster', () => {
  let handle: SandboxHandle;

  beforeAll(async () => {
    cluster = await useLocalCluster();
    provider = new KubernetesSandboxProvider({ kubeConfig: cluster.kubeConfig, local: new DockerSandboxProvider(docker), registryHost: cluster.registry });
  }, FIRST_BUILD_TIMEOUT_MS);

  afterAll(async () => {
    await Promise.all(made.map((n) => provider?.teardown(n).catch(() => undefined)));
    await cluster?.release();
  }, 120_000);

  it('pushes a local image to the registry once and names it by digest; the registry answers for that reference', async () => {
    const local = await docker.getImage('berth-base:bookworm').inspect();
    const config = await provider.images.ensure('berth-base:bookworm');
    expect(config.id).toMatch(new RegExp(`^${cluster.registry.replace(/\./g, '\\.')}/berth/berth-base@sha256:[0-9a-f]{64}$`));
    image = config.id;
    // The engine recorded the push: the digest reference is this very image.
    expect((await docker.getImage(`${registryRepository(cluster.registry, 'berth-base:bookworm')}:${registryTag(local.Id)}`).inspect()).Id).toBe(local.Id);
    // Read back from the registry alone (what a worker without the image does), under the same reference.
    const again = await provider.images.config(image);
    expect(again).toMatchObject({ id: image, user: config.user, workdir: config.workdir, env: config.env });
    expect(await provider.images.config(`${cluster.registry}/berth/berth-base@sha256:${'0'.repeat(64)}`)).toBeNull();
  }, 120_000);

  it('seeds a pod with the spec\'s env and workdir and its uploads, and execs as another user', async () => {
    const host = mkdtempSync(join(tmpdir(), 'berth-k8s-up-'));
    writeFileSync(join(host, 'task.txt'), 'from the host\n');
    const seeded = await provider.seed(spec(`berth/k8s-provider-${suffix}/seed/1`, { env: { TASK_VAR: 'v1' }, workdir: '/app', user: 'nobody', uploadDirs: [{ hostDir: host }] }));
    expect(seeded.adopted).toBe(false);
    handle = seeded.handle;
    expect(handle).toMatchObject({ user: 'nobody', workdir: '/app' });
    const r = await provider.exec(handle, { command: 'echo "$TASK_VAR $(pwd) $(id -un)"; cat task.txt; stat -c %U task.txt' });
    expect(r).toMatchObject({ exitCode: 0, stdout: 'v1 /app nobody\nfrom the host\nnobody\n' });
    expect(await provider.attach(handle.name)).toEqual(handle);
    expect(await provider.inspect(handle)).toMatchObject({ running: true, exitCode: null, containerId: handle.containerId, image });
  }, 180_000);

  it('runs a detached process to its exit code and output', async () => {
    const launched = await provider.launchDetached(handle, { key: `k8s-${suffix}`, command: 'echo detached-out; exit 7', timeoutSec: 30 });
    expect(['started', 'exists']).toContain(launched.state);
    const done = launched.done ?? (await provider.waitDetached(handle, `k8s-${suffix}`, { tailBytes: 100, pollMs: 200 }));
    expect(done.exitCode).toBe(7);
    expect(done.timedOut).toBe(false);
    const again = await startDetached(provider.driver, handle, { key: `k8s-${suffix}`, command: 'echo never' });
    expect(again.started).toBe(false);
  }, 60_000);

  it('moves files in and out, and reads the pod\'s log', async () => {
    await provider.upload(handle, [{ name: 'in/a.txt', content: 'a' }, { name: 'in/run.sh', content: '#!/bin/sh\necho ran\n', mode: 0o755 }], '/work', { owner: 'nobody' });
    expect((await provider.exec(handle, { command: '/work/in/run.sh; stat -c %U /work/in/a.txt' })).stdout).toBe('ran\nnobody\n');
    await provider.exec(handle, { command: 'mkdir -p /logs/agent && echo result > /logs/agent/out.txt && echo skip > /logs/agent/skip.tmp', user: 'root' });
    const out = mkdtempSync(join(tmpdir(), 'berth-k8s-down-'));
    await provider.download(handle, '/logs/agent', out, { exclude: ['*.tmp'] });
    expect(readFileSync(join(out, 'out.txt'), 'utf8')).toBe('result\n');
    expect(() => readFileSync(join(out, 'skip.tmp'))).toThrow();
    expect(await provider.pathKind(handle, '/logs/agent')).toBe('dir');
    expect(await provider.logTail(handle)).toContain('berth: keep-alive ready');
  }, 60_000);

  it('refuses what the driver cannot do, by name', async () => {
    expect(provider.driver.capabilities).toMatchObject({ groups: true, finalState: false });
  });

  it('tears down by handle; exec afterwards is SandboxLost', async () => {
    expect(await provider.teardown(handle)).toEqual({ removed: true });
    await waitForPodGone(cluster.core, 'default', handle.containerId);
    await expect(provider.exec(handle, { command: 'true' })).rejects.toBeInstanceOf(SandboxLost);
    expect(await provider.teardown(handle)).toEqual({ removed: false });
  }, 60_000);

  it('the janitor removes the pods of an episode no longer running (a dead worker\'s) and keeps a live one\'s', async () => {
    const dead = await provider.seed(spec(`berth/k8s-provider-${suffix}/dead/1`));
    const live = await provider.seed(spec(`berth/k8s-provider-${suffix}/live/1`));
    const connection = await Connection.connect({ address: temporalAddress().address });
    try {
      // Temporal has no workflow of the dead one's id: what a worker killed mid-episode leaves once its run ended.
      // Other files' pods share the namespace: they count as live, so this janitor never touches them.
      const askTemporal = temporalLiveness(new Client({ connection }));
      const report = await provider.janitor({ isLive: (id) => (id.endsWith(`/dead/1`) ? askTemporal(id) : Promise.resolve(true)) });
      expect(report.removed).toContainEqual({ name: dead.handle.name, workflowId: `berth/k8s-provider-${suffix}/dead/1` });
    } finally {
      await connection.close();
    }
    await waitForPodGone(cluster.core, 'default', dead.handle.containerId);
    const kept = await provider.janitor({ isLive: (id) => Promise.resolve(!id.includes(suffix) || id.endsWith('/live/1')) });
    expect(kept.kept).toContainEqual({ name: live.handle.name, workflowId: `berth/k8s-provider-${suffix}/live/1`, reason: 'episode is running' });
    expect((await provider.exec(live.handle, { command: 'true' })).exitCode).toBe(0);
  }, 180_000);
});
