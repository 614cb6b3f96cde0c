import Docker from 'dockerode';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SingleSandboxSpec } from '../../src/sandbox/driver.ts';
import { SeedFailed } from '../../src/sandbox/errors.ts';
import { DockerSandboxProvider, KubernetesSandboxProvider } from '../../src/sandbox/index.ts';
import { KubernetesDriver } from '../../src/sandbox/kubernetes/driver.ts';
import { localAddressToward } from '../../src/sandbox/kubernetes/egress.ts';
import type { SandboxHandle } from '../../src/sandbox/types.ts';
import { FIRST_BUILD_TIMEOUT_MS, useLocalCluster, type LocalCluster } from '../helpers/kubernetes.ts';
import { waitUntil } from '../helpers/worker-process.ts';

// The egress controller of a pod on the local cluster (issue 23: "the agent's container has no NET_ADMIN and cannot
// change the rules or reach the controller"): a pod created on no network, its controller out of the sandbox's sight
// (no shared PID namespace), killed on the node and restarted by the kubelet without widening the rules, a switch through the
// restarted controller, and a controller that cannot set its first rules failing the seed with its output.

const suffix = randomBytes(3).toString('hex');
const namespace = `berth-knet-egress-${suffix}`;

/** Prints reach or blocked for one HTTP GET from inside the sandbox, no proxy. */
const PROBE = 'import sys, urllib.request\ntry:\n    urllib.request.build_opener(urllib.request.ProxyHandler({})).open(sys.argv[1], timeout=4).read(); print("reach")\nexcept Exception:\n    print("blocked")\n';

describe('the egress controller in a pod', () => {
  let cluster: LocalCluster;
  let provider: KubernetesSandboxProvider;
  let server: Server;
  let outside = '';
  let image = '';
  let handle: SandboxHandle;

  const spec = (name: string, network: string): SingleSandboxSpec => ({
    name, image, network,
    labels: { batch: `batch-${suffix}`, workflowId: `berth/k-net-egress-${suffix}/${name}`, role: 'agent' },
    keepAlive: ['sh', '-c', '(python3 -m http.server 9999 --bind 127.0.0.1 >/dev/null 2>&1 &); exec sleep infinity'],
    env: {}, user: 'root', workdir: '/',
  });
  const probe = async (url: string) => (await provider.driver.exec(handle, { argv: ['python3', '-c', PROBE, url] })).stdout.trim();
  const controllerStatus = async () => (await cluster.core.readNamespacedPod({ name: handle.containerId, namespace })).status?.initContainerStatuses?.find((c) => c.name === 'egress');

  beforeAll(async () => {
    cluster = await useLocalCluster();
    server = createServer((_req, res) => res.end('outside\n'));
    await new Promise<void>((r) => server.listen(0, '0.0.0.0', () => r()));
    outside = `http://${await localAddressToward('203.0.113.1')}:${(server.address() as { port: number }).port}/`;
    await cluster.core.createNamespace({ body: { metadata: { name: namespace } } });
    await waitUntil(() => cluster.core.readNamespacedServiceAccount({ name: 'default', namespace }).then(() => true, () => false), 60_000, 'the namespace\'s service account');
    provider = new KubernetesSandboxProvider({ kubeConfig: cluster.kubeConfig, namespace, local: new DockerSandboxProvider(new Docker()), registryHost: cluster.registry });
    image = await provider.images.id('berth-base:bookworm');
  }, FIRST_BUILD_TIMEOUT_MS);

  afterAll(async () => {
    await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
    await cluster.core.deleteNamespace({ name: namespace }).catch(() => undefined);
    await cluster?.release();
  }, 120_000);

  it('a pod created on no network reaches its own loopback and nothing outside, from its first process on', async () => {
    handle = (await provider.driver.createOrAdoptSandbox(spec('offline', 'none'))).handle;
    await waitUntil(async () => (await probe('http://127.0.0.1:9999/')) === 'reach', 20_000, 'the sandbox\'s loopback server');
    expect(await probe(outside)).toBe('blocked');
    // The host answers the same URL (so "blocked" is the pod's rules, not a dead server).
    expect(await fetch(outside).then((r) => r.status)).toBe(200);
  }, 120_000);

  it('the sandbox cannot see the controller (no shared PID namespace); killed on the node, the kubelet restarts it and the rules stay as they were', async () => {
    const fromInside = await provider.driver.exec(handle, { argv: ['sh', '-c', 'pkill -fx "sleep 2147483647"; echo $?'] });
    expect(fromInside.stdout.trim()).toBe('1'); // no process of that name in the sandbox's view
    expect(await probe(outside)).toBe('blocked');
    // A controller that ends anyway (a crash): its process on this node, found by the pod's cgroup, killed from outside.
    const uid = (await cluster.core.readNamespacedPod({ name: handle.containerId, namespace })).metadata!.uid!;
    const ofPod = (pid: string) => { try { const c = readFileSync(`/proc/${pid}/cgroup`, 'utf8'); return c.includes(uid) || c.includes(uid.replace(/-/g, '_')); } catch { return false; } };
    const cmdline = (pid: string) => { try { return readFileSync(`/proc/${pid}/cmdline`, 'utf8'); } catch { return ''; } };
    const controller = readdirSync('/proc').filter((p) => /^\d+$/.test(p) && cmdline(p) === 'sleep\u00002147483647\u0000' && ofPod(p));
    expect(controller).toHaveLength(1);
    const before = (await controllerStatus())?.restartCount ?? 0;
    process.kill(Number(controller[0]), 'SIGKILL');
    await waitUntil(async () => {
      const s = await controllerStatus();
      return (s?.restartCount ?? 0) > before && Boolean(s?.state?.running) && s?.started === true;
    }, 90_000, 'the controller restarted');
    expect(await probe(outside)).toBe('blocked');
  }, 120_000);

  it('a phase switch goes through the restarted controller, both ways', async () => {
    await provider.network.applyPhase(handle, { mode: 'public', hosts: [] });
    expect(await probe(outside)).toBe('reach');
    await provider.network.applyPhase(handle, { mode: 'no-network', hosts: [] });
    expect(await probe(outside)).toBe('blocked');
    expect(await probe('http://127.0.0.1:9999/')).toBe('reach');
    await provider.driver.remove({ name: handle.name, kind: 'single' });
  }, 120_000);

  it('a controller that cannot set its first rules fails the seed with its output, and the sandbox never starts', async () => {
    // berth-base has no iptables: a controller on it fails at its first rules.
    const broken = new KubernetesDriver({ kubeConfig: cluster.kubeConfig, namespace, egressImage: () => Promise.resolve(image), startTimeoutMs: 90_000 });
    const made = broken.createOrAdoptSandbox(spec('broken', 'none'));
    await expect(made).rejects.toBeInstanceOf(SeedFailed);
    await expect(made).rejects.toThrow(/egress controller of pod .* could not set its network: .*xtables-nft-multi/);
    const pod = await cluster.core.readNamespacedPod({ name: 'broken', namespace });
    expect(pod.status?.containerStatuses?.[0]?.state?.running).toBeUndefined();
    await broken.remove({ name: 'broken', kind: 'single' });
  }, 120_000);
});
