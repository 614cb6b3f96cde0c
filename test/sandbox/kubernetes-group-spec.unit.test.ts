import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { ComposeModel, ComposeService } from '../../src/sandbox/compose/model.ts';
import type { ImageConfig } from '../../src/sandbox/image-config.ts';
import {
  containerName, durationSec, groupOrder, groupPod, groupRefusals, healthOf, HOLDER, LOADER, LOADER_DONE, MAIN_GATE, startupProbe, volumePrefills,
  type GroupPodInput,
} from '../../src/sandbox/kubernetes/group-spec.ts';
import { groupState } from '../../src/sandbox/kubernetes/group-state.ts';
import { AUTH_PULL_GRACE_MS } from '../../src/sandbox/kubernetes/pull-failure.ts';
import { containerStatus, podAndContainer, serviceContainerId } from '../../src/sandbox/kubernetes/pod-address.ts';

// The pure mapping of a Compose group onto one pod (issue 23: "every service of the task's Compose file becomes a pod
// (or a container of one pod) reachable by its service name, with its own healthcheck, depends_on order, volumes shared
// as Compose shares them"). The models are what `docker compose config --format json` prints.

const model = (services: Record<string, ComposeService>, extra: Partial<ComposeModel> = {}): ComposeModel => ({ services: { main: { image: 'main-img' }, ...services }, ...extra });
const image = (over: Partial<ImageConfig> = {}): ImageConfig => ({ id: 'sha256:x', user: null, workdir: null, env: {}, entrypoint: null, cmd: null, healthcheck: null, ...over });

const input = (m: ComposeModel, over: Partial<GroupPodInput> = {}): GroupPodInput => ({
  podName: 'berth-t-agent-0123', project: 'berth-t-agent-0123', labels: { batch: 'b', workflowId: 'berth/b/t/1', role: 'agent' }, model: m,
  images: Object.fromEntries(Object.keys(m.services).filter((s) => s !== 'main').map((s) => [s, `reg/berth/${s}@sha256:1`])), imageConfigs: {},
  main: { image: 'reg/berth/main@sha256:0', keepAlive: ['/bin/sh', '-c', 'exec sleep infinity'], env: { TASK: 'v' }, user: 'agent', workdir: '/app' },
  isFile: (p) => p.endsWith('.txt'),
  ...over,
});

const all = (pod: V1Pod): V1Container[] => [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])];
const named = (pod: V1Pod, name: string): V1Container => all(pod).find((c) => c.name === name)!;

describe('Compose durations', () => {
  it.each([
    ['30s', 30], ['1m30s', 90], ['500ms', 0.5], ['1h', 3600], [12, 12], [undefined, undefined], ['', undefined],
  ] as const)('%s', (text, want) => {
    expect(durationSec(text)).toBe(want);
  });

  it('refuses what is not a duration, naming it', () => {
    expect(() => durationSec('soon')).toThrow(/"soon" is not a Compose duration/);
  });
});

describe('a service\'s healthcheck (its own, else its image\'s; Compose defaults 30 s, 30 s, 3)', () => {
  it.each([
    ['CMD form runs without a shell', { test: ['CMD', 'curl', '-f', 'x'], interval: '2s', retries: 15, start_period: '3s' }, null,
      { command: ['curl', '-f', 'x'], intervalSec: 2, timeoutSec: 30, retries: 15, startPeriodSec: 3 }],
    ['CMD-SHELL through /bin/sh', { test: ['CMD-SHELL', 'test -e /ok'] }, null, { command: ['/bin/sh', '-c', 'test -e /ok'], intervalSec: 30, timeoutSec: 30, retries: 3, startPeriodSec: 0 }],
    ['a plain string is CMD-SHELL', { test: 'true' }, null, { command: ['/bin/sh', '-c', 'true'], intervalSec: 30, timeoutSec: 30, retries: 3, startPeriodSec: 0 }],
    ['NONE turns it off', { test: ['NONE'] }, { command: 'x', intervalSec: 1, timeoutSec: 1, startPeriodSec: 0, startIntervalSec: 1, retries: 1 }, null],
    ['disable turns the image\'s off', { disable: true }, { command: 'x', intervalSec: 1, timeoutSec: 1, startPeriodSec: 0, startIntervalSec: 1, retries: 1 }, null],
    ['none at all', undefined, null, null],
  ])('%s', (_what, healthcheck, fromImage, want) => {
    const s: ComposeService = healthcheck === undefined ? {} : { healthcheck };
    expect(healthOf(s, fromImage ? image({ healthcheck: fromImage }) : null)).toEqual(want);
  });

  it('takes the image\'s HEALTHCHECK when the service sets none, as Docker runs it', () => {
    const hc = { command: 'pg_isready', intervalSec: 5, timeoutSec: 2, startPeriodSec: 1, startIntervalSec: 1, retries: 4 };
    expect(healthOf({}, image({ healthcheck: hc }))).toEqual({ command: ['/bin/sh', '-c', 'pg_isready'], intervalSec: 5, timeoutSec: 2, retries: 4, startPeriodSec: 1 });
  });

  it('probes every second for as long as Compose would wait before calling it unhealthy (start_period + retries × interval)', () => {
    expect(startupProbe({ command: ['true'], intervalSec: 2, timeoutSec: 5, retries: 15, startPeriodSec: 3 }))
      .toEqual({ exec: { command: ['true'] }, periodSeconds: 1, timeoutSeconds: 5, failureThreshold: 33 });
  });
});

describe('depends_on order as init containers', () => {
  it.each([
    ['main waits for its healthy sidecar; nothing depends on the loose one', model({
      main: { image: 'm', depends_on: { api: { condition: 'service_healthy' } } }, api: { image: 'a' }, loose: { image: 'l' },
    }), { init: ['api', 'main'], oneShots: [], leaves: ['loose'] }],
    ['a one-shot before main, a chain after it', model({
      main: { image: 'm', depends_on: { migrate: { condition: 'service_completed_successfully' } } },
      migrate: { image: 'x', depends_on: { db: { condition: 'service_started' } } }, db: { image: 'd' },
      poller: { image: 'p', depends_on: { main: { condition: 'service_started' } } }, web: { image: 'w', depends_on: { poller: { condition: 'service_started' } } },
    }), { init: ['db', 'migrate', 'main', 'poller'], oneShots: ['migrate'], leaves: ['web'] }],
    ['no depends_on at all', model({ b: { image: 'b' }, a: { image: 'a' } }), { init: ['main'], oneShots: [], leaves: ['a', 'b'] }],
    ['a dependency that is not in the file (required: false) is ignored', model({
      main: { image: 'm', depends_on: { gone: { condition: 'service_started', required: false } } },
    }), { init: ['main'], oneShots: [], leaves: [] }],
  ])('%s', (_what, m, want) => {
    expect(groupOrder(m)).toEqual(want);
  });

  it('names a cycle', () => {
    expect(() => groupOrder(model({ main: { image: 'm', depends_on: { a: {} } }, a: { image: 'a', depends_on: { main: {} } } }))).toThrow(/depends_on cycle/);
  });
});

describe('what the Kubernetes group refuses, by key', () => {
  const taskDir = '/tasks/t';
  it.each([
    ['a key with no counterpart in a pod', { db: { image: 'x', ulimits: { nofile: 1 } } }, 'services.db.ulimits'],
    ['a named user', { db: { image: 'x', user: 'postgres' } }, 'services.db.user'],
    ['a bind mount outside the task folder', { db: { image: 'x', volumes: [{ type: 'bind', source: '/etc', target: '/e' }] } }, 'services.db.volumes[0]'],
    ['a named pipe mount', { db: { image: 'x', volumes: [{ type: 'npipe', source: 'p', target: '/p' }] } }, 'services.db.volumes[0]'],
    ['two services on one port', { a: { image: 'x', expose: ['8000'] }, b: { image: 'y', expose: ['8000/tcp'] } }, 'services.b.expose'],
    ['a name that is no host name', { my_db: { image: 'x' } }, 'services.my_db'],
    ['service_healthy on a service without a healthcheck', { main: { image: 'm', depends_on: { db: { condition: 'service_healthy' } } }, db: { image: 'x' } }, 'services.main.depends_on.db'],
    ['services Compose would keep apart', { a: { image: 'x', networks: { front: null } }, b: { image: 'y', networks: { back: null } } }, 'services.b.networks'],
  ])('%s', (_what, services, key) => {
    const refusals = groupRefusals(model(services as Record<string, ComposeService>), taskDir, {});
    expect(refusals.map((r) => r.key)).toContain(key);
    expect(refusals.every((r) => r.problem.length > 0 && r.fix.length > 0)).toBe(true);
  });

  it('accepts what it maps: the corpus\'s shapes, binds of the task\'s files, numeric users, a healthcheck from the image', () => {
    const m = model({
      main: { image: 'm', depends_on: { api: { condition: 'service_healthy' } }, volumes: [{ type: 'volume', source: 'shared', target: '/s' }] },
      api: {
        image: 'x', user: '1000:1000', expose: ['8000'], healthcheck: { test: ['CMD', 'true'] }, environment: { A: 'b', B: null }, labels: { a: 'b' }, restart: 'no',
        volumes: [{ type: 'bind', source: '/tasks/t/environment/data', target: '/data', read_only: true }, { type: 'tmpfs', target: '/t' }],
        deploy: { resources: { limits: { cpus: 0.5, memory: '268435456' } } }, networks: { default: null },
      },
    }, { volumes: { shared: { name: 'p_shared' } } });
    expect(groupRefusals(m, taskDir, {})).toEqual([]);
    const fromImage = model({ main: { image: 'm', depends_on: { db: { condition: 'service_healthy' } } }, db: { image: 'x' } });
    // Before the images are known (at plan time), what only an image can answer is not held against the file.
    expect(groupRefusals(fromImage, taskDir)).toEqual([]);
    expect(groupRefusals(fromImage, taskDir, { db: image({ healthcheck: { command: 'true', intervalSec: 1, timeoutSec: 1, startPeriodSec: 0, startIntervalSec: 1, retries: 1 } }) })).toEqual([]);
  });
});

describe('the group\'s pod', () => {
  const m = model({
    main: {
      image: 'ignored', depends_on: { api: { condition: 'service_healthy' }, seed: { condition: 'service_completed_successfully' } },
      environment: { FROM_FILE: '1', TASK: 'file' }, healthcheck: { test: ['CMD', 'test', '-e', '/ready'] },
      volumes: [{ type: 'volume', source: 'shared', target: '/shared' }, { type: 'bind', source: '/tasks/t/environment/notes.txt', target: '/notes.txt', read_only: true }],
    },
    api: {
      image: 'api', entrypoint: ['python3'], command: ['-m', 'http.server'], user: '1000:1001', working_dir: '/srv', environment: { PORT: '8000', UNSET: null },
      healthcheck: { test: ['CMD-SHELL', 'curl -sf localhost:8000'], interval: '2s', retries: 5 }, cap_add: ['NET_ADMIN'],
      volumes: [{ type: 'volume', source: 'shared', target: '/data' }, { type: 'bind', source: '/tasks/t/environment/site', target: '/site' }],
      deploy: { resources: { limits: { cpus: 0.5, memory: '268435456' } } }, networks: { default: { aliases: ['API.local'] } }, extra_hosts: ['upstream=10.1.2.3'],
    },
    seed: { image: 'seed', command: ['sh', '-c', 'echo seeded > /shared/x'], volumes: [{ type: 'volume', source: 'shared', target: '/shared' }] },
    poller: { image: 'poller', healthcheck: { test: ['CMD', 'true'] } },
  });
  const made = groupPod(input(m, { imageConfigs: { poller: image({ user: '99', workdir: '/p' }) }, sidecarEnv: { BERTH_PROXY: 'p' } }));
  const pod = made.pod;

  it('is one pod: the loader, then depends_on order as init containers, then the services nothing depends on beside the holder', () => {
    expect(pod.spec?.initContainers?.map((c) => c.name)).toEqual([LOADER, 'api', 'seed', 'main']);
    expect(pod.spec?.containers.map((c) => c.name)).toEqual([HOLDER, 'poller']);
    expect(pod.spec?.restartPolicy).toBe('Never');
    expect(pod.metadata).toMatchObject({ name: 'berth-t-agent-0123', labels: { 'berth.sandbox': 'group' } });
    expect(pod.metadata?.annotations).toMatchObject({ 'berth.group': 'berth-t-agent-0123', 'berth.workflow': 'berth/b/t/1', 'berth.user': 'agent', 'berth.workdir': '/app' });
    expect(JSON.parse(pod.metadata!.annotations!['berth.services']!)).toEqual({
      main: { container: 'main', user: 'agent', workdir: '/app' }, api: { container: 'api', user: '1000:1001', workdir: '/srv' },
      seed: { container: 'seed', user: '0', workdir: '/' }, poller: { container: 'poller', user: '99', workdir: '/p' },
    });
  });

  it('reaches every service (and alias) by name at 127.0.0.1, extra_hosts at theirs', () => {
    expect(pod.spec?.hostAliases).toEqual([
      { ip: '127.0.0.1', hostnames: ['api', 'api.local', 'main', 'poller', 'seed'] },
      { ip: '10.1.2.3', hostnames: ['upstream'] },
    ]);
  });

  it('runs main\'s keep-alive as root with main\'s env over the file\'s, held back from its dependents by the gate and its own healthcheck', () => {
    const main = named(pod, 'main');
    expect(main).toMatchObject({ image: 'reg/berth/main@sha256:0', command: ['/bin/sh', '-c', 'exec sleep infinity'], args: [], restartPolicy: 'Always', securityContext: { runAsUser: 0, runAsGroup: 0 } });
    expect(main.env).toEqual([{ name: 'FROM_FILE', value: '1' }, { name: 'TASK', value: 'v' }]);
    expect(main.startupProbe?.exec?.command).toEqual(['/bin/sh', '-c', 'test -e "$0" && exec "$@"', MAIN_GATE, 'test', '-e', '/ready']);
  });

  it('maps a sidecar\'s entrypoint, command, user, working_dir, env, caps, limits and healthcheck', () => {
    const api = named(pod, 'api');
    expect(api).toMatchObject({
      image: 'reg/berth/api@sha256:1', command: ['python3'], args: ['-m', 'http.server'], workingDir: '/srv', restartPolicy: 'Always',
      securityContext: { runAsUser: 1000, runAsGroup: 1001, capabilities: { add: ['NET_ADMIN'] } },
      resources: { limits: { cpu: '500m', memory: '268435456' }, requests: { cpu: '500m', memory: '268435456' } },
      startupProbe: { exec: { command: ['/bin/sh', '-c', 'curl -sf localhost:8000'] }, periodSeconds: 1, failureThreshold: 10 },
    });
    expect(api.env).toEqual([{ name: 'PORT', value: '8000' }, { name: 'BERTH_PROXY', value: 'p' }]);
  });

  it('makes a one-shot a plain init container and a leaf\'s healthcheck its readiness', () => {
    const seed = named(pod, 'seed');
    expect(seed.restartPolicy).toBeUndefined();
    expect(seed.startupProbe).toBeUndefined();
    // Only a command: the image's entrypoint stays (Kubernetes' args).
    expect(seed.command).toBeUndefined();
    expect(seed.args).toEqual(['sh', '-c', 'echo seeded > /shared/x']);
    const poller = named(pod, 'poller');
    expect(poller.readinessProbe).toMatchObject({ exec: { command: ['true'] }, failureThreshold: 1 });
    expect(poller.startupProbe).toBeUndefined();
  });

  it('shares a named volume as one emptyDir; copies bind sources in through the loader (a file by subPath)', () => {
    const mount = (c: string, path: string) => named(pod, c).volumeMounts!.find((v) => v.mountPath === path)!;
    expect(mount('main', '/shared').name).toBe(mount('api', '/data').name);
    expect(mount('seed', '/shared').name).toBe(mount('api', '/data').name);
    expect(pod.spec?.volumes?.find((v) => v.name === mount('main', '/shared').name)).toEqual({ name: mount('main', '/shared').name, emptyDir: {} });
    expect(mount('main', '/notes.txt')).toMatchObject({ subPath: 'notes.txt', readOnly: true });
    expect(mount('api', '/site').subPath).toBeUndefined();
    // In container order: api (an init container before main) first.
    expect(made.binds.map((b) => b.source)).toEqual(['/tasks/t/environment/site', '/tasks/t/environment/notes.txt']);
    const loader = named(pod, LOADER);
    expect(loader.command?.join(' ')).toContain(LOADER_DONE);
    expect(loader.volumeMounts?.map((v) => v.mountPath)).toEqual(made.binds.map((b) => b.loaderDir));
    expect(loader.volumeMounts?.map((v) => v.name)).toEqual([mount('api', '/site').name, mount('main', '/notes.txt').name]);
  });

  it('fills a named or anonymous volume from the first image with files at its mount point, in Compose\'s start order (not nocopy, not a subpath)', () => {
    const m = model({
      main: { image: 'main-img', depends_on: { db: { condition: 'service_started' } }, volumes: [{ type: 'volume', source: 'data', target: '/shared' }] },
      db: { image: 'db', volumes: [{ type: 'volume', source: 'data', target: '/var/lib/db' }, { type: 'volume', target: '/cache' }, { type: 'volume', source: 'raw', target: '/raw', volume: { nocopy: true } }] },
      web: { image: 'web', volumes: [{ type: 'volume', source: 'data', target: '/srv' }, { type: 'volume', source: 'part', target: '/p', volume: { subpath: 'x' } }] },
    });
    const candidates = volumePrefills(m);
    const mountOf = (p: V1Pod, c: string, path: string) => named(p, c).volumeMounts!.find((v) => v.mountPath === path)!.name;
    const plain = groupPod(input(m)).pod;
    // db starts before main (main depends on it), web (nothing depends on it) after: db's files win, as on Docker.
    expect(candidates.get(mountOf(plain, 'db', '/var/lib/db'))).toEqual([{ service: 'db', target: '/var/lib/db' }, { service: 'main', target: '/shared' }, { service: 'web', target: '/srv' }]);
    expect(candidates.get(mountOf(plain, 'db', '/cache'))).toEqual([{ service: 'db', target: '/cache' }]);
    expect(candidates.has(mountOf(plain, 'db', '/raw'))).toBe(false);
    expect(candidates.has(mountOf(plain, 'web', '/p'))).toBe(false);
    expect(named(plain, LOADER)).toBeUndefined();

    const data = mountOf(plain, 'db', '/var/lib/db');
    const made = groupPod(input(m, { prefilled: new Set([data, 'vol-not-in-this-pod']) }));
    expect(made.prefills).toEqual([{ volume: data, loaderDir: `/berth-binds/${data}` }]);
    expect(named(made.pod, LOADER).volumeMounts).toEqual([{ name: data, mountPath: `/berth-binds/${data}` }]);
    expect(made.pod.spec!.initContainers![0]!.name).toBe(LOADER);
  });

  it('clears an image\'s entrypoint as Docker does for entrypoint: [] (the command, else the image\'s CMD, is the argv)', () => {
    const p = groupPod(input(model({ a: { image: 'a', entrypoint: [] } }), { imageConfigs: { a: image({ entrypoint: ['/init'], cmd: ['serve'] }) } })).pod;
    expect(named(p, 'a')).toMatchObject({ command: ['serve'], args: [] });
  });

  it('names containers as DNS labels, keeping Berth\'s own names free', () => {
    expect(containerName('db')).toBe('db');
    expect(containerName('main')).toBe('main');
    expect(containerName('Web.App')).toMatch(/^web-app-[0-9a-f]{8}$/);
    expect(containerName(HOLDER)).not.toBe(HOLDER);
  });
});

describe('whether the pod is up, as up --wait judges', () => {
  const order = { init: ['api', 'seed', 'main'], oneShots: ['seed'], leaves: ['poller'] };
  const containers = { api: 'api', seed: 'seed', main: 'main', poller: 'poller' };
  const running = { state: { running: {} } };
  const pod = (init: Record<string, object>, regular: Record<string, object>, phase = 'Running'): V1Pod => ({
    status: {
      phase,
      initContainerStatuses: Object.entries(init).map(([name, s]) => ({ name, image: '', imageID: '', ready: false, restartCount: 0, ...s })),
      containerStatuses: Object.entries(regular).map(([name, s]) => ({ name, image: '', imageID: '', ready: false, restartCount: 0, ...s })),
    },
  });
  it.each([
    ['every service up, the one-shot done', pod({ api: { ...running, started: true }, seed: { state: { terminated: { exitCode: 0 } } }, main: { ...running, started: true } }, { [HOLDER]: running, poller: { ...running, ready: true } }), 'ready', [], ['seed']],
    ['main not through its gate yet', pod({ api: { ...running, started: true }, seed: { state: { terminated: { exitCode: 0 } } }, main: { ...running, started: false } }, {}), 'waiting', [], ['seed']],
    ['a leaf not healthy yet', pod({ api: { ...running, started: true }, seed: { state: { terminated: { exitCode: 0 } } }, main: { ...running, started: true } }, { [HOLDER]: running, poller: running }), 'waiting', [], ['seed']],
    ['the one-shot failed', pod({ api: { ...running, started: true }, seed: { state: { terminated: { exitCode: 3 } } } }, {}, 'Failed'), 'failed', ['seed: exited with code 3'], []],
    ['a sidecar restarted (exited, or failed its startup healthcheck)', pod({ api: { ...running, restartCount: 1, lastState: { terminated: { exitCode: 137 } } } }, {}), 'failed', ['api: exited with code 137 or failed its healthcheck at start'], []],
    ['an image that cannot be pulled', pod({ api: { state: { waiting: { reason: 'ErrImagePull', message: 'not found' } } } }, {}), 'failed', ['api: cannot start (ErrImagePull): not found'], []],
    ['a leaf that exited 0 counts as up', pod({ api: { ...running, started: true }, seed: { state: { terminated: { exitCode: 0 } } }, main: { ...running, started: true } }, { [HOLDER]: running, poller: { state: { terminated: { exitCode: 0 } } } }), 'ready', [], ['seed', 'poller']],
  ])('%s', (_what, p, state, failures, exited) => {
    const got = groupState(p, order, containers);
    expect(got.state).toBe(state);
    expect(got.failures.map((f) => `${f.service}: ${f.why}`)).toEqual(failures);
    expect(got.exited).toEqual(exited);
  });

  // As for a single pod (pull-failure.ts): with a pull secret, a sidecar's refused authorization is waited on for the
  // grace the kubelet's secret cache needs; anything else, or past the grace, fails the group at once.
  const refused = { state: { waiting: { reason: 'ErrImagePull', message: 'failed to authorize: 401 Unauthorized' } } };
  it.each([
    ['refused, pull secret, just now', refused, true, 1_000, 'waiting'],
    ['refused, pull secret, past the grace', refused, true, AUTH_PULL_GRACE_MS, 'failed'],
    ['refused, no pull secret', refused, false, 1_000, 'failed'],
    ['not found, pull secret', { state: { waiting: { reason: 'ImagePullBackOff', message: 'manifest unknown' } } }, true, 1_000, 'failed'],
    ['a bad config, pull secret', { state: { waiting: { reason: 'CreateContainerConfigError', message: 'unauthorized' } } }, true, 1_000, 'failed'],
  ])('a sidecar\'s pull: %s', (_what, api, hasPullSecret, failingForMs, state) => {
    const got = groupState(pod({ api }, {}), order, containers, { hasPullSecret, failingForMs: (c) => (c === 'api' ? failingForMs : 0) });
    expect(got.state).toBe(state);
    if (state === 'waiting') expect(got.waiting).toContain('api');
  });
});

describe('handles of a pod\'s containers', () => {
  it('names main by the pod alone (as a single sandbox) and any other service as pod/container', () => {
    expect(serviceContainerId('p', 'main')).toBe('p');
    expect(serviceContainerId('p', 'api')).toBe('p/api');
    expect(podAndContainer('p')).toEqual({ pod: 'p', container: 'main' });
    expect(podAndContainer('p/api')).toEqual({ pod: 'p', container: 'api' });
    const pod: V1Pod = { status: { initContainerStatuses: [{ name: 'api', image: '', imageID: '', ready: false, restartCount: 2 }] } };
    expect(containerStatus(pod, 'api')?.restartCount).toBe(2);
    expect(containerStatus(pod, 'main')).toBeUndefined();
  });
});
