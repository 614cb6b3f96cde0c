import Docker from 'dockerode';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SingleSandboxSpec } from '../../src/sandbox/driver.ts';
import { SandboxLost, SeedFailed } from '../../src/sandbox/errors.ts';
import { KubernetesDriver } from '../../src/sandbox/kubernetes/driver.ts';
import { PooledKubeConfig } from '../../src/sandbox/kubernetes/pooled-config.ts';
import { CoreV1Api } from '@kubernetes/client-node';
import { SEEDED_MARKER } from '../../src/sandbox/seed-scripts.ts';
import type { SandboxHandle } from '../../src/sandbox/types.ts';
import { FIRST_BUILD_TIMEOUT_MS, pushByDigest, useLocalCluster, waitForPodGone, type LocalCluster } from '../helpers/kubernetes.ts';
import { entriesOf, tarOf } from '../helpers/tar.ts';

// The Kubernetes driver's start (issue 23) on the local cluster: a pod per single sandbox behind SandboxDriver,
// exec with the user, working directory, environment and budget the neutral code asks for, files as tar over
// exec, adoption of a seeded pod, the janitor's listing and removal.

const suffix = randomBytes(4).toString('hex');
const docker = new Docker();
let cluster: LocalCluster;
let driver: KubernetesDriver;
let image = '';
let pushedTag = '';

async function pushBase(registry: string): Promise<string> {
  pushedTag = `${registry}/berth-test/driver-base-${suffix}:1`;
  await docker.getImage('berth-base:bookworm').tag({ repo: pushedTag.slice(0, pushedTag.lastIndexOf(':')), tag: '1' });
  return pushByDigest(docker, pushedTag);
}

function spec(name: string): SingleSandboxSpec {
  return {
    name, image, network: 'bridge',
    labels: { batch: `batch-${suffix}`, workflowId: `berth/k8s-driver-${suffix}/Task_1`, role: 'agent' },
    keepAlive: ['sh', '-c', 'mkdir -p /logs && exec sleep infinity'],
    env: { TASK_VAR: 'from-the-spec' }, user: 'root', workdir: '/tmp', cpus: 0.5, memoryMb: 256,
  };
}

/** spec() without limits (the node starts it sooner), with its own keep-alive, seeded for its first exec here. */
function light(name: string, keepAlive: string): SingleSandboxSpec {
  const { cpus: _c, memoryMb: _m, ...rest } = spec(name);
  return { ...rest, keepAlive: ['sh', '-c', keepAlive], readyOnFirstExec: true };
}

/** A setup that fails is the seed's failure, with its output, at the first command; the command never runs. */
async function expectFailedSetup(d: KubernetesDriver, name: string): Promise<void> {
  const { handle: broken } = await d.createOrAdoptSandbox(light(name, 'sleep 0.3; echo no-such-user-here >&2; exit 3'));
  const failed = d.exec(broken, { argv: ['sh', '-c', 'echo ran'] });
  await expect(failed).rejects.toBeInstanceOf(SeedFailed);
  await expect(failed).rejects.toThrow(/failed \(exit 3\): no-such-user-here/);
}

/** Counts the exec and attach streams a driver opens from now on (each takes a connection of its own). */
function countStreams(d: KubernetesDriver): { exec: number; attach: number } {
  const streams = (d.kubeConfig as PooledKubeConfig).streamAgent!;
  const counts = { exec: 0, attach: 0 };
  const agent = streams as unknown as { addRequest(req: { path: string }, ...rest: unknown[]): void };
  const add = agent.addRequest.bind(agent);
  agent.addRequest = (req, ...rest) => {
    if (req.path.includes('/exec?')) counts.exec++;
    if (req.path.includes('/attach?')) counts.attach++;
    add(req, ...rest);
  };
  return counts;
}

describe('KubernetesDriver on the local cluster', () => {
  const name = `Berth_k8s.Driver-${suffix}`;
  let handle: SandboxHandle;

  beforeAll(async () => {
    cluster = await useLocalCluster();
    driver = new KubernetesDriver({ kubeConfig: cluster.kubeConfig });
    image = await pushBase(cluster.registry);
  }, FIRST_BUILD_TIMEOUT_MS);

  afterAll(async () => {
    await driver?.remove({ name, kind: 'single' }).catch(() => undefined);
    if (pushedTag) await docker.getImage(pushedTag).remove().catch(() => undefined);
    await cluster?.release();
  }, 120_000);

  it('names the cluster and declares what it cannot do', async () => {
    const id = await driver.engineIdentity();
    expect(id.version).toBe(cluster.version);
    // Compose groups are test/kubernetes/compose.test.ts's; networks per phase test/kubernetes/network.test.ts's.
    expect(driver.capabilities).toMatchObject({ groups: true, networkSwitching: true, noNetwork: true, allowlist: true, internalNetworks: true });
  });

  it('creates a pod for a sandbox whose name is not a DNS label, with its limits and annotations', async () => {
    const made = await driver.createOrAdoptSandbox(spec(name));
    expect(made.adopted).toBe(false);
    handle = made.handle;
    expect(handle.name).toBe(name);
    expect(handle.containerId).toMatch(/^berth-k8s-driver-[0-9a-f]{8}-[0-9a-f]{10}$/);
    const pod = await cluster.core.readNamespacedPod({ name: handle.containerId, namespace: 'default' });
    expect(pod.spec?.containers[0]?.resources?.limits).toEqual({ cpu: '500m', memory: '256Mi' });
    expect(pod.metadata?.annotations?.['berth.workflow']).toBe(`berth/k8s-driver-${suffix}/Task_1`);
  });

  it('execs with the handle\'s workdir, the spec\'s env, another user, and a budget', async () => {
    const r = await driver.exec(handle, { argv: ['sh', '-c', 'pwd; echo $TASK_VAR $EXTRA; id -u'], env: { EXTRA: 'per-exec' } });
    expect(r).toMatchObject({ exitCode: 0, stdout: '/tmp\nfrom-the-spec per-exec\n0\n', timedOut: false });
    const nobody = await driver.exec(handle, { argv: ['id', '-un'], user: 'nobody', workdir: '/' });
    expect(nobody.stdout).toBe('nobody\n');
    const slow = await driver.exec(handle, { argv: ['sleep', '30'], timeoutSec: 1 });
    expect(slow).toMatchObject({ exitCode: 124, timedOut: true });
    const big = await driver.exec(handle, { argv: ['sh', '-c', 'seq 1 100000'], outputCapBytes: 100 });
    expect(big.stdoutTruncated).toBe(true);
    expect(big.stdout.endsWith('99999\n100000\n')).toBe(true);
  });

  // Issue 38: a command that never started says why (notStarted), as the launcher or the runtime answered; one that
  // ran and failed does not.
  it('a command that never started is typed: no such user, no working directory, no program (alone, behind timeout, behind env)', async () => {
    const cases: Array<[string, Parameters<KubernetesDriver['exec']>[1], object | undefined]> = [
      ['no such user', { argv: ['bash', '-c', 'true'], user: 'ghost' }, { reason: 'no-user' }],
      ['no working directory', { argv: ['bash', '-c', 'true'], workdir: '/no/such/dir' }, { reason: 'no-workdir' }],
      ['no program', { argv: ['no-such-program'] }, { reason: 'no-program', program: 'no-such-program' }],
      ['no program behind timeout', { argv: ['no-such-program'], timeoutSec: 5 }, { reason: 'no-program', program: 'no-such-program' }],
      ['no program behind env', { argv: ['no-such-program'], env: { A: '1' } }, { reason: 'no-program', program: 'no-such-program' }],
      ["the command's own missing program", { argv: ['bash', '-c', 'no-such-program'] }, undefined],
    ];
    for (const [what, options, notStarted] of cases) {
      const r = await driver.exec(handle, options);
      expect([what, r.notStarted]).toEqual([what, notStarted === undefined ? undefined : expect.objectContaining(notStarted)]);
      expect(r.exitCode).not.toBe(0);
    }
  });

  it('puts and gets archives', async () => {
    await driver.putArchive(handle, '/work/in', await tarOf({ 'a.txt': 'a', 'b/c.txt': 'c' }));
    expect(await entriesOf(await driver.getArchive(handle, '/work/in'))).toEqual({ 'in/': null, 'in/a.txt': 'a', 'in/b/': null, 'in/b/c.txt': 'c' });
    await expect(driver.getArchive(handle, '/work/nothing')).rejects.toThrow(/does not exist in sandbox/);
    expect(await driver.pathKind(handle, '/work/in')).toBe('dir');
    expect(await driver.pathKind(handle, '/work/in/a.txt')).toBe('file');
    expect(await driver.pathKind(handle, '/work/nothing')).toBeNull();
  });

  it('replaces an unseeded pod of the same name and adopts a seeded one', async () => {
    const again = await driver.createOrAdoptSandbox(spec(name));
    expect(again.adopted).toBe(false);
    handle = again.handle;
    expect((await driver.exec(handle, { argv: ['test', '-e', '/work/in/a.txt'] })).exitCode).toBe(1);
    await driver.exec(handle, { argv: ['touch', SEEDED_MARKER] });
    const adopted = await driver.createOrAdoptSandbox(spec(name));
    expect(adopted).toMatchObject({ adopted: true, handle: { name, containerId: handle.containerId, workdir: '/tmp' } });
  });

  it('returns a new pod only once its keep-alive reached sleep infinity, and a failed setup with its output', async () => {
    const slow = `Berth_k8s.Slow-${suffix}`;
    const broken = `Berth_k8s.Broken-${suffix}`;
    try {
      const made = await driver.createOrAdoptSandbox({ ...spec(slow), keepAlive: ['sh', '-c', 'sleep 3; touch /setup-done; exec sleep infinity'] });
      expect((await driver.exec(made.handle, { argv: ['test', '-e', '/setup-done'] })).exitCode).toBe(0);
      const failed = driver.createOrAdoptSandbox({ ...spec(broken), keepAlive: ['sh', '-c', 'echo no-such-user-here >&2; exit 3'] });
      await expect(failed).rejects.toBeInstanceOf(SeedFailed);
      await expect(failed).rejects.toThrow(/failed \(exit 3\): no-such-user-here/);
    } finally {
      await driver.remove({ name: slow, kind: 'single' }).catch(() => undefined);
      await driver.remove({ name: broken, kind: 'single' }).catch(() => undefined);
    }
  });

  it('a new pod is ready once its keep-alive answers, before its status says running, and inspect and start accept it while the status lags', async () => {
    // The kubelet puts a started container in the pod's status at its next relist (every second): four pods, so that
    // at least one is ready before that (each is, unless a relist falls between its start and the exec that saw it).
    const names = [0, 1, 2, 3].map((i) => `Berth_k8s.Early${i}-${suffix}`);
    try {
      const seen = await Promise.all(names.map(async (n) => {
        // No CPU request: four of spec()'s half CPU beside the other tests' pods would not fit the node.
        const { cpus: _cpus, memoryMb: _memory, ...light } = spec(n);
        const { handle: h } = await driver.createOrAdoptSandbox(light);
        const pod = await cluster.core.readNamespacedPod({ name: h.containerId, namespace: 'default' });
        const lagged = !pod.status?.containerStatuses?.[0]?.state?.running;
        // The kubelet serves the log only once its status has the container: asked again then, not '(log unavailable)'.
        const log = await driver.logTail(h);
        const info = await driver.inspect(h);
        await driver.start(h);
        const r = await driver.exec(h, { argv: ['sh', '-c', 'echo $TASK_VAR'] });
        return { lagged, log, running: info.running, status: info.status, out: r.stdout.trim() };
      }));
      for (const s of seen) expect(s).toMatchObject({ running: true, status: 'running', out: 'from-the-spec' });
      // The keep-alive's output (none of its own here; the channel's answers once they come), never unavailable.
      for (const s of seen) expect(s.log).toMatch(/^\(no output\)$|^berth:ch [0-9a-f]+ 0 /);
      expect(seen.some((s) => s.lagged)).toBe(true);
    } finally {
      await Promise.all(names.map((n) => driver.remove({ name: n, kind: 'single' }).catch(() => undefined)));
    }
  });

  it('a new pod\'s container is asked once, after the kubelet\'s Started event for it, not at every look', async () => {
    const own = new KubernetesDriver({ kubeconfigFile: cluster.kubeconfig });
    const names = [0, 1].map((i) => `Berth_k8s.Once${i}-${suffix}`);
    const light = (n: string) => { const { cpus: _c, memoryMb: _m, ...rest } = spec(n); return rest; };
    try {
      await own.createOrAdoptSandbox(light(names[0]!)); // the first starts the driver's watch of Started events
      await new Promise((r) => setTimeout(r, 500));
      const streams = countStreams(own);
      const { handle: h } = await own.createOrAdoptSandbox({ ...light(names[1]!), keepAlive: ['sh', '-c', 'sleep 0.3; exec sleep infinity'] });
      // Before, each look once the pod was on a node asked too (3 to 4 execs on a quiet machine, more under load).
      expect(streams.exec).toBe(1);
      expect((await own.exec(h, { argv: ['sh', '-c', 'echo $TASK_VAR'] })).stdout.trim()).toBe('from-the-spec');
    } finally {
      await Promise.all(names.map((n) => own.remove({ name: n, kind: 'single' }).catch(() => undefined)));
    }
  });

  it('a pod seeded for its first exec here is returned at its Started event with no exec, and that exec asks for the keep-alive first', async () => {
    // Without the keep-alive's channel (an image without tail or wc, or an attach refused): the exec asks.
    const own = new KubernetesDriver({ kubeconfigFile: cluster.kubeconfig, execChannel: false });
    const names = [0, 1, 2, 3].map((i) => `Berth_k8s.First${i}-${suffix}`);
    try {
      await own.createOrAdoptSandbox({ ...light(names[0]!, 'exec sleep infinity'), readyOnFirstExec: false }); // starts the watch
      const streams = countStreams(own);
      // The setup takes longer than the start: the first exec waits in the container, then runs its command once.
      const { handle: slow } = await own.createOrAdoptSandbox(light(names[1]!, 'sleep 0.5; touch /setup-done; exec sleep infinity'));
      expect(streams.exec).toBe(0);
      const first = await own.exec(slow, { argv: ['sh', '-c', 'test -e /setup-done && echo $TASK_VAR >> /ran && cat /ran'] });
      expect({ exitCode: first.exitCode, out: first.stdout.trim(), err: first.stderr }).toEqual({ exitCode: 0, out: 'from-the-spec', err: '' });
      expect(streams.exec).toBe(1);
      expect((await own.exec(slow, { argv: ['cat', '/ran'] })).stdout.trim()).toBe('from-the-spec'); // not run twice
      expect(streams).toEqual({ exec: 2, attach: 0 });
      // A command's own exit 97 is its answer, not the keep-alive missing.
      const { handle: own97 } = await own.createOrAdoptSandbox(light(names[2]!, 'exec sleep infinity'));
      const r = await own.exec(own97, { argv: ['sh', '-c', 'echo mine >&2; exit 97'] });
      expect({ exitCode: r.exitCode, err: r.stderr.trim() }).toEqual({ exitCode: 97, err: 'mine' });
      await expectFailedSetup(own, names[3]!);
    } finally {
      await Promise.all(names.map((n) => own.remove({ name: n, kind: 'single' }).catch(() => undefined)));
    }
  });

  it('a pod it created takes its commands over the keep-alive\'s channel, one attach and no exec; a setup still running or failed, as with exec', async () => {
    const own = new KubernetesDriver({ kubeconfigFile: cluster.kubeconfig });
    const names = [0, 1, 2].map((i) => `Berth_k8s.Channel${i}-${suffix}`);
    try {
      const { handle: watching } = await own.createOrAdoptSandbox({ ...light(names[0]!, 'exec sleep infinity'), readyOnFirstExec: false }); // starts the watch
      await own.exec(watching, { argv: ['true'] }); // its attach made
      const streams = countStreams(own);
      const { handle: slow } = await own.createOrAdoptSandbox(light(names[1]!, 'sleep 0.5; touch /setup-done; exec sleep infinity'));
      // An exec's process has no parent in the container (PPID 0); a request's is the loop's.
      const ppid = (r: { stdout: string }) => Number(r.stdout.trim().split(' ')[0]);
      const first = await own.exec(slow, { argv: ['sh', '-c', 'test -e /setup-done && echo $PPID $TASK_VAR >> /ran && cat /ran'] });
      expect({ exitCode: first.exitCode, err: first.stderr, out: first.stdout.trim().split(' ')[1] }).toEqual({ exitCode: 0, err: '', out: 'from-the-spec' });
      expect(ppid(first)).toBeGreaterThan(1);
      expect((await own.exec(slow, { argv: ['cat', '/ran'] })).stdout.trim().split('\n')).toHaveLength(1); // not run twice
      // A user, a working directory, the environment, a budget and a cap, as an exec's.
      expect((await own.exec(slow, { argv: ['sh', '-c', 'pwd; echo $EXTRA; id -un'], user: 'nobody', workdir: '/', env: { EXTRA: 'x y' } })).stdout).toBe('/\nx y\nnobody\n');
      expect(await own.exec(slow, { argv: ['sleep', '30'], timeoutSec: 1 })).toMatchObject({ exitCode: 124, timedOut: true });
      const big = await own.exec(slow, { argv: ['sh', '-c', 'seq 1 100000'], outputCapBytes: 100 });
      expect({ truncated: big.stdoutTruncated, end: big.stdout.endsWith('99999\n100000\n'), length: big.stdout.length }).toEqual({ truncated: true, end: true, length: 100 });
      expect(streams).toEqual({ exec: 0, attach: 1 });
      // Something in the sandbox ends every process it can (the loop among them): that command fails as a broken exec
      // would (not a lost sandbox), the pod keeps running and later commands go through exec.
      await expect(own.exec(slow, { argv: ['sh', '-c', 'kill -9 -1'] })).rejects.toThrow(/channel .* ended/);
      const after = await own.exec(slow, { argv: ['sh', '-c', 'echo $PPID'] });
      expect({ exitCode: after.exitCode, ppid: ppid(after) }).toEqual({ exitCode: 0, ppid: 0 });
      expect(streams.exec).toBe(1);
      await expectFailedSetup(own, names[2]!);
    } finally {
      await Promise.all(names.map((n) => own.remove({ name: n, kind: 'single' }).catch(() => undefined)));
    }
  });

  it('a driver given a kubeconfig file makes its API calls over one kept-alive TLS connection, not one each', async () => {
    const own = new KubernetesDriver({ kubeconfigFile: cluster.kubeconfig });
    expect(own.kubeConfig).toBeInstanceOf(PooledKubeConfig);
    const core = own.kubeConfig.makeApiClient(CoreV1Api);
    await core.readNamespace({ name: 'default' });
    const agent = (own.kubeConfig as PooledKubeConfig).agent!;
    let connections = 0;
    const connect = agent.createConnection.bind(agent);
    agent.createConnection = ((...args: Parameters<typeof connect>) => { connections++; return connect(...args); }) as typeof agent.createConnection;
    for (let i = 0; i < 10; i++) await core.readNamespace({ name: 'default' });
    await Promise.all([core.readNamespace({ name: 'default' }), core.listNamespacedPod({ namespace: 'default' })]);
    expect((own.kubeConfig as PooledKubeConfig).agent).toBe(agent);
    expect(connections).toBeLessThanOrEqual(1); // the two at once: the second may open one more
    // Execs take a connection each, resuming the TLS session of the one before.
    expect((await own.exec(handle, { argv: ['echo', 'first'] })).stdout.trim()).toBe('first');
    const streams = (own.kubeConfig as PooledKubeConfig).streamAgent!;
    const reused: boolean[] = [];
    const open = streams.createConnection.bind(streams);
    streams.createConnection = ((...args: Parameters<typeof open>) => {
      const socket = open(...args) as import('node:tls').TLSSocket;
      socket.once('secureConnect', () => reused.push(socket.isSessionReused()));
      return socket;
    }) as typeof streams.createConnection;
    for (const word of ['second', 'third']) expect((await own.exec(handle, { argv: ['echo', word] })).stdout.trim()).toBe(word);
    expect(reused).toEqual([true, true]);
  });

  it('lists by Berth label and removes; an exec after removal is SandboxLost', async () => {
    const listed = await driver.listByLabel([`berth.workflow=berth/k8s-driver-${suffix}/Task_1`]);
    expect(listed).toEqual([{ name, kind: 'single', workflowId: `berth/k8s-driver-${suffix}/Task_1` }]);
    expect(await driver.listByLabel([`berth.batch=other-${suffix}`])).toEqual([]);
    expect(await driver.remove({ name, kind: 'single' })).toEqual({ removed: true });
    await waitForPodGone(cluster.core, 'default', handle.containerId);
    await expect(driver.exec(handle, { argv: ['true'] })).rejects.toBeInstanceOf(SandboxLost);
    expect(await driver.remove({ name, kind: 'single' })).toEqual({ removed: false });
  });
});
