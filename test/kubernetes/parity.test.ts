import Docker from 'dockerode';
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxDriver, SingleSandboxSpec } from '../../src/sandbox/driver.ts';
import { DockerDriver } from '../../src/sandbox/docker/driver.ts';
import { KubernetesDriver } from '../../src/sandbox/kubernetes/driver.ts';
import type { SandboxHandle } from '../../src/sandbox/types.ts';
import { FIRST_BUILD_TIMEOUT_MS, pushByDigest, useLocalCluster, type LocalCluster } from '../helpers/kubernetes.ts';
import { tarOf } from '../helpers/tar.ts';
import { BUSYBOX_IMAGE, ensureShelllessImages } from '../compose/shellless-images.ts';

// Where Docker defines the behaviour, the Kubernetes driver is asked the same question as the Docker driver and the
// answers are compared (issue 23: "ENTRYPOINT and healthcheck semantics exactly as on Docker"): an image's
// configuration (read from the registry on Kubernetes, from the engine on Docker) and who a numeric user is.

const suffix = randomBytes(4).toString('hex');
const docker = new Docker();
const dockerDriver = new DockerDriver({ docker });
let cluster: LocalCluster;
let k8s: KubernetesDriver;
const localTag = `berth-test/k8s-parity-${suffix}:1`;
let pushedTag = '';
let pushedByDigest = '';

const DOCKERFILE = `FROM berth-base:bookworm
ENV GREETING="hello world" EMPTY=
WORKDIR /srv/app
USER 1234:55
ENTRYPOINT ["/bin/sh", "-c", "exec \\"$@\\"", "entry"]
CMD ["sleep", "1"]
HEALTHCHECK --interval=7s --timeout=3s --start-period=2s --retries=4 CMD test -d /srv
`;

async function build(tag: string): Promise<void> {
  const stream = await docker.buildImage(Readable.from([await tarOf({ Dockerfile: DOCKERFILE })]) as unknown as NodeJS.ReadableStream, { t: tag, rm: true });
  const out = await new Promise<Array<{ error?: string }>>((resolve, reject) => docker.modem.followProgress(stream, (err, o) => (err ? reject(err) : resolve(o ?? []))));
  const failed = out.find((m) => m.error);
  if (failed) throw new Error(`docker build ${tag}: ${failed.error}`);
}

function spec(name: string, image: string): SingleSandboxSpec {
  return {
    name, image, network: 'bridge',
    labels: { batch: `batch-${suffix}`, workflowId: `berth/k8s-parity-${suffix}/${name}`, role: 'agent' },
    // A user whose primary group is not among its /etc/group memberships, and one with supplementary groups.
    keepAlive: ['sh', '-c', 'useradd -u 2001 -U -G users,audio member && exec sleep infinity'], env: {}, user: 'root', workdir: '/',
  };
}

describe('the Kubernetes driver answers as the Docker driver does', () => {
  const made: Array<[SandboxDriver, string]> = [];

  beforeAll(async () => {
    cluster = await useLocalCluster();
    k8s = new KubernetesDriver({ kubeConfig: cluster.kubeConfig });
    await build(localTag);
    pushedTag = `${cluster.registry}/${localTag}`;
    await docker.getImage(localTag).tag({ repo: pushedTag.slice(0, pushedTag.lastIndexOf(':')), tag: '1' });
    pushedByDigest = await pushByDigest(docker, pushedTag);
  }, FIRST_BUILD_TIMEOUT_MS);

  afterAll(async () => {
    for (const [driver, name] of made) await driver.remove({ name, kind: 'single' }).catch(() => undefined);
    for (const tag of [pushedTag, localTag]) if (tag) await docker.getImage(tag).remove().catch(() => undefined);
    await cluster?.release();
  }, 120_000);

  it('reads ENTRYPOINT, CMD, USER, WORKDIR, ENV and HEALTHCHECK from the registry as the engine reports them', async () => {
    const fromEngine = await dockerDriver.imageConfiguration(localTag);
    expect(fromEngine).toMatchObject({ user: '1234:55', workdir: '/srv/app', cmd: ['sleep', '1'], healthcheck: { intervalSec: 7, retries: 4 } });
    expect(fromEngine!.env).toMatchObject({ GREETING: 'hello world', EMPTY: '' });
    // The engine's image id is the config blob's digest: the same id both ways, by tag and by digest.
    expect(await k8s.imageConfiguration(pushedTag)).toEqual(fromEngine);
    expect(await k8s.imageConfiguration(pushedByDigest)).toEqual(fromEngine);
    expect(await dockerDriver.imageConfiguration(`berth-test/k8s-parity-${suffix}:absent`)).toBeNull();
    expect(await k8s.imageConfiguration(`${cluster.registry}/berth-test/k8s-parity-${suffix}:absent`)).toBeNull();
    expect(await k8s.imageConfiguration(`${cluster.registry}/berth-test/never-pushed-${suffix}:1`)).toBeNull();
  });

  it('runs a numeric user with or without a passwd entry as Docker exec does (ids, groups, HOME)', async () => {
    const ask = async (driver: SandboxDriver, handle: SandboxHandle, user: string) =>
      (await driver.exec(handle, { argv: ['sh', '-c', 'echo "$(id -u) $(id -g) $(id -G) $HOME"'], user })).stdout;
    const onDocker = (await dockerDriver.createOrAdoptSandbox(spec(`berth-k8s-parity-d-${suffix}`, 'berth-base:bookworm'))).handle;
    made.push([dockerDriver, onDocker.name]);
    const onK8s = (await k8s.createOrAdoptSandbox(spec(`berth-k8s-parity-k-${suffix}`, pushedByDigest))).handle;
    made.push([k8s, onK8s.name]);
    const users = ['1234', '1234:55', '65534', '65534:0', 'nobody', '0:55', '2001', '2001:55', 'member'];
    const docker = await Promise.all(users.map((u) => ask(dockerDriver, onDocker, u)));
    expect(docker[0]).toBe('1234 0 0 /\n');
    expect(docker[2]).toMatch(/^65534 65534 65534 \/nonexistent\n$/);
    const kube = await Promise.all(users.map((u) => ask(k8s, onK8s, u)));
    expect(Object.fromEntries(users.map((u, i) => [u, kube[i]]))).toEqual(Object.fromEntries(users.map((u, i) => [u, docker[i]])));
  });

  it('in a busybox image (no coreutils env, no bash) an exec\'s working directory, environment and exit code are as on Docker', async () => {
    await ensureShelllessImages();
    const pushed = `${cluster.registry}/berth-test/k8s-parity-busybox-${suffix}`;
    await docker.getImage(BUSYBOX_IMAGE).tag({ repo: pushed, tag: '1' });
    const busybox = await pushByDigest(docker, `${pushed}:1`);
    const plain = (name: string, image: string): SingleSandboxSpec => ({ ...spec(name, image), keepAlive: ['sh', '-c', 'exec sleep infinity'] });
    const onDocker = (await dockerDriver.createOrAdoptSandbox(plain(`berth-k8s-parity-bd-${suffix}`, BUSYBOX_IMAGE))).handle;
    made.push([dockerDriver, onDocker.name]);
    const onK8s = (await k8s.createOrAdoptSandbox(plain(`berth-k8s-parity-bk-${suffix}`, busybox))).handle;
    made.push([k8s, onK8s.name]);
    const asks = [
      { argv: ['sh', '-c', 'pwd; echo "$A|$B"'], workdir: '/data', env: { A: 'x y', B: '' } },
      { argv: ['pwd'], workdir: '/tmp' },
      { argv: ['sh', '-c', 'echo out; echo err >&2; exit 3'] },
      { argv: ['sleep', '5'], timeoutSec: 1 },
    ];
    const answers = (driver: SandboxDriver, handle: SandboxHandle) =>
      // uid 0: the image has no /etc/passwd, and Docker finds no user named root in it.
      Promise.all(asks.map(async (a) => { const r = await driver.exec(handle, { user: '0', ...a }); return { exitCode: r.exitCode, stdout: r.stdout, stderr: r.stderr }; }));
    const fromDocker = await answers(dockerDriver, onDocker);
    expect(fromDocker[0]).toEqual({ exitCode: 0, stdout: '/data\nx y|\n', stderr: '' });
    expect(fromDocker[2]).toEqual({ exitCode: 3, stdout: 'out\n', stderr: 'err\n' });
    expect(await answers(k8s, onK8s)).toEqual(fromDocker);
    await docker.getImage(`${pushed}:1`).remove().catch(() => undefined);
  });
});
