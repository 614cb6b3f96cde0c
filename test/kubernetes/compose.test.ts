import Docker from 'dockerode';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBatch } from '../../src/client/batch.ts';
import type { GroupSpec } from '../../src/sandbox/driver.ts';
import { SandboxLost, SeedFailed } from '../../src/sandbox/errors.ts';
import { KubernetesDriver } from '../../src/sandbox/kubernetes/driver.ts';
import { podName } from '../../src/sandbox/kubernetes/pod-spec.ts';
import { DockerSandboxProvider, KubernetesSandboxProvider } from '../../src/sandbox/index.ts';
import { SEEDED_MARKER } from '../../src/sandbox/seed-scripts.ts';
import { FIRST_BUILD_TIMEOUT_MS, pushByDigest, useLocalCluster, waitForPodGone, type LocalCluster } from '../helpers/kubernetes.ts';
import { writeDataset } from '../helpers/tasks.ts';
import { startTestWorkers, type TestCluster } from '../helpers/temporal.ts';
import { waitUntil } from '../helpers/worker-process.ts';
import { composeFolder, groupLeftovers } from '../compose/helpers.ts';

// Compose groups on the Kubernetes sandbox (issue 23: "every service of the task's Compose file becomes a pod (or a
// container of one pod) reachable by its service name, with its own healthcheck, depends_on order, volumes shared as
// Compose shares them, sidecar artifacts and collect hooks, and the group removed as one"; tests: "a Compose task with
// a sidecar, hooks and artifacts" and "the same test files run against Docker and Kubernetes where behaviour must be
// equal"). The group is one pod (src/sandbox/kubernetes/group-spec.ts says why); this file's pods live in a namespace
// of its own, made and deleted here.

const suffix = randomBytes(4).toString('hex');
const namespace = `berth-kgroups-${suffix}`;
const docker = new Docker();
const examples = join(import.meta.dirname, '..', '..', 'examples');

let cluster: LocalCluster | undefined;
let ready: Promise<LocalCluster> | undefined;

/** The cluster and this file's namespace, made on first use (the Docker half of the file needs neither). */
function onCluster(): Promise<LocalCluster> {
  ready ??= (async () => {
    cluster = await useLocalCluster();
    const core = cluster.core;
    await core.createNamespace({ body: { metadata: { name: namespace } } });
    // Pods are admitted once the namespace's default service account exists (the controller-manager makes it).
    await waitUntil(async () => (await core.listNamespacedServiceAccount({ namespace })).items.some((s) => s.metadata?.name === 'default'), 60_000, 'the namespace\'s default service account');
    return cluster;
  })();
  return ready;
}

afterAll(async () => {
  await cluster?.core.deleteNamespace({ name: namespace }).catch(() => undefined);
  await cluster?.release();
}, 120_000);

describe('the Kubernetes driver\'s groups (real cluster)', () => {
  let cluster: LocalCluster;
  let driver: KubernetesDriver;
  let image = '';
  const tag = `berth-test/kgroups-base-${suffix}`;

  beforeAll(async () => {
    cluster = await onCluster();
    driver = new KubernetesDriver({ kubeConfig: cluster.kubeConfig, namespace });
    await docker.getImage('berth-base:bookworm').tag({ repo: `${cluster.registry}/${tag}`, tag: '1' });
    image = await pushByDigest(docker, `${cluster.registry}/${tag}:1`);
    // Every sidecar here runs the base image, already in the registry.
    driver.publishImage = () => Promise.resolve(image);
  }, FIRST_BUILD_TIMEOUT_MS);

  afterAll(async () => {
    await docker.getImage(`${cluster.registry}/${tag}:1`).remove().catch(() => undefined);
  });

  const spec = (project: string, compose: string, files: Record<string, string> = {}): GroupSpec => {
    const folder = composeFolder(compose, files);
    return {
      project, labels: { batch: `b-${suffix}`, workflowId: `berth/kgroups-${suffix}/${project}`, role: 'agent' },
      composeFile: folder.file, projectDir: folder.projectDir, interpolationEnv: { ...process.env },
      main: { image, keepAlive: ['/bin/sh', '-c', 'mkdir -p /logs && exec sleep infinity'], env: { FROM_BERTH: 'main-only' }, user: 'root', workdir: '/' },
      prepareImages: () => Promise.resolve({}),
      internal: false, waitTimeoutSec: 90,
      // What the seed's last step does: main's marker, which adoption reads.
      afterMain: async (main) => { await driver.exec(main, { argv: ['touch', SEEDED_MARKER] }); },
    };
  };

  it('makes the group one pod: names resolve, main waits for a one-shot and a healthy sidecar, a volume and a task folder are shared; adopted, listed, removed as one by the janitor', async () => {
    const project = `berth-kgroups-${suffix}-one`;
    const s = spec(project, `
services:
  main:
    depends_on:
      db:
        condition: service_healthy
      prep:
        condition: service_completed_successfully
    volumes:
      - shared:/shared
  prep:
    image: berth-base:bookworm
    command: ["sh", "-c", "echo prepared > /shared/prepared"]
    volumes:
      - shared:/shared
  db:
    image: berth-base:bookworm
    command: ["sh", "-c", "sleep 8; date +%s%N > /shared/db-healthy; touch /tmp/ok; exec sleep infinity"]
    environment:
      DB_ONLY: "yes"
    healthcheck:
      test: ["CMD", "test", "-e", "/tmp/ok"]
      interval: 1s
      retries: 30
    volumes:
      - shared:/shared
      - ./site:/site:ro
volumes:
  shared: {}
`, { 'environment/site/hello.txt': 'from the task folder\n' });
    let seededAt = '';
    const made = await driver.createOrAdoptGroup({
      ...s,
      afterMain: async (main) => {
        // main's seed runs only once its dependency is healthy (the healthcheck gates depends_on).
        seededAt = (await driver.exec(main, { argv: ['sh', '-c', 'date +%s%N; cat /shared/db-healthy'] })).stdout;
        await s.afterMain!(main);
      },
    });
    expect(made.adopted).toBe(false);
    const [now, dbHealthy] = seededAt.trim().split('\n').map(Number);
    expect(dbHealthy).toBeGreaterThan(0);
    expect(now).toBeGreaterThanOrEqual(dbHealthy!);
    expect(Object.keys(made.group.services).sort()).toEqual(['db', 'main', 'prep']);
    expect(made.group.stopped).toEqual(['prep']);
    const { main, db, prep } = made.group.services;
    const run = async (h: typeof main, command: string) => driver.exec(h!, { argv: ['sh', '-c', command] });
    // The one-shot ran to its end before main started; an exec in it now says so (nothing is lost).
    expect((await run(main, 'cat /shared/prepared')).stdout).toBe('prepared\n');
    const ended = run(prep, 'true');
    await expect(ended).rejects.toThrow(/has exited \(code 0\)/);
    await expect(ended).rejects.not.toBeInstanceOf(SandboxLost);
    // One pod, one container per service.
    const pods = (await cluster.core.listNamespacedPod({ namespace, labelSelector: 'berth.sandbox=group' })).items.filter((p) => p.metadata?.annotations?.['berth.group'] === project);
    expect(pods.map((p) => p.metadata?.name)).toEqual([podName(project)]);
    // Reachable by service name, env per service, the named volume and the bind-mounted task folder shared.
    expect((await run(main, 'getent hosts db')).stdout).toMatch(/^127\.0\.0\.1\s+db/);
    expect((await run(main, 'echo "${FROM_BERTH}-${DB_ONLY:-none}"')).stdout).toBe('main-only-none\n');
    expect((await run(db, 'echo "${FROM_BERTH:-none}-${DB_ONLY}"')).stdout).toBe('none-yes\n');
    expect((await run(main, 'echo from-main > /shared/m && cat /shared/db-healthy >/dev/null && echo ok')).stdout).toBe('ok\n');
    expect((await run(db, 'cat /shared/m /site/hello.txt')).stdout).toBe('from-main\nfrom the task folder\n');
    expect((await run(db, 'touch /site/x')).exitCode).not.toBe(0);
    // A second create adopts the seeded group; a later worker rebuilds its handles; the janitor sees a group.
    const again = await driver.createOrAdoptGroup(s);
    expect(again.adopted).toBe(true);
    expect(again.group.services.db).toEqual(db);
    expect((await driver.inspectGroup(project)).services).toEqual(made.group.services);
    expect(await driver.listByLabel([`berth.workflow=berth/kgroups-${suffix}/${project}`])).toEqual([{ name: project, kind: 'group', workflowId: `berth/kgroups-${suffix}/${project}` }]);
    // The janitor (this namespace is this file's own) removes the group of an episode that no longer runs, as one.
    const janitor = new KubernetesSandboxProvider({ kubeConfig: cluster.kubeConfig, namespace, local: new DockerSandboxProvider(docker), registryHost: cluster.registry });
    const report = await janitor.janitor({ isLive: () => Promise.resolve(false) });
    expect(report.removed).toEqual([{ name: project, workflowId: `berth/kgroups-${suffix}/${project}` }]);
    await waitForPodGone(cluster.core, namespace, podName(project));
    await expect(driver.inspectGroup(project)).rejects.toThrow(/is gone/);
    expect(await driver.remove({ name: project, kind: 'group' })).toEqual({ removed: false });
  }, 240_000);

  it('a one-shot service that fails fails the seed, naming the service and its log', async () => {
    const project = `berth-kgroups-${suffix}-bad`;
    const made = driver.createOrAdoptGroup(spec(project, `
services:
  main:
    depends_on:
      setup:
        condition: service_completed_successfully
  setup:
    image: berth-base:bookworm
    command: ["sh", "-c", "echo broken-setup; exit 3"]
`));
    await expect(made).rejects.toBeInstanceOf(SeedFailed);
    await expect(made).rejects.toThrow(/service "setup" exited with code 3 at start; the last lines of its log:\nbroken-setup/);
    await driver.remove({ name: project, kind: 'group' });
    await waitForPodGone(cluster.core, namespace, podName(project));
  }, 180_000);

  it('refuses what it cannot map before making any pod, naming the key and the fix', async () => {
    const project = `berth-kgroups-${suffix}-refused`;
    const made = driver.createOrAdoptGroup(spec(project, `
services:
  main: {}
  db:
    image: berth-base:bookworm
    user: postgres
    ulimits:
      nofile: 1024
`));
    await expect(made).rejects.toThrow(/services\.db\.user: user "postgres" is a name.*fix: give the uid/);
    await expect(made).rejects.toThrow(/services\.db\.ulimits/);
    await expect(cluster.core.readNamespacedPod({ name: podName(project), namespace })).rejects.toMatchObject({ code: 404 });
  }, 60_000);
});

// The task: a built sidecar reached by its service name behind a healthcheck that passes only once it serves, a
// one-shot service main waits for, a named volume three services share, a folder of the task bind-mounted into the
// sidecar, a service nothing depends on, a collect hook in the sidecar and two sidecar artifacts.
const SERVER = `import json, os, pathlib, time
from http.server import BaseHTTPRequestHandler, HTTPServer
time.sleep(8)
os.makedirs('/var/log/api', exist_ok=True)
stats = {'orders': 0}
class H(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get('Content-Length', 0)))
        stats['orders'] += 1
        with open('/var/log/api/orders.log', 'a') as f:
            f.write(body.decode() + '\\n')
        self.reply(201, {'ok': True})
    def do_GET(self):
        if self.path == '/stats':
            self.reply(200, stats)
        elif self.path == '/site':
            self.reply(200, {'site': open('/site/hello.txt').read().strip()})
        else:
            self.reply(404, {})
    def reply(self, code, obj):
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header('Content-Length', str(len(data)))
        self.end_headers()
        self.wfile.write(data)
    def log_message(self, *args):
        pass
server = HTTPServer(('0.0.0.0', 8000), H)
pathlib.Path('/shared/from-api').write_text('api was here\\n')
pathlib.Path('/tmp/up').touch()
server.serve_forever()
`;

const TASK: Record<string, string> = {
  'orders/task.toml': `artifacts = [
  { source = "/var/log/api/orders.log", service = "api" },
  { source = "/tmp/stats.json", service = "api" },
]
[environment]
docker_image = "berth-base:bookworm"
workdir = "/app"
[agent]
timeout_sec = 120
[verifier]
timeout_sec = 60
[[verifier.collect]]
service = "api"
command = "python3 -c \\"import urllib.request; open('/tmp/stats.json', 'wb').write(urllib.request.urlopen('http://localhost:8000/stats').read())\\""
timeout_sec = 30
`,
  'orders/instruction.md': 'Place two orders with the api service and write what you learn to /app/out.txt.\n',
  'orders/environment/docker-compose.yaml': `services:
  main:
    # Berth runs main's entrypoint at seed: it records whether the healthy api was already up.
    entrypoint: ["sh", "-c", "if test -e /shared/from-api; then echo gated; else echo early; fi > /shared/gate; exec sleep infinity"]
    depends_on:
      api:
        condition: service_healthy
      seed:
        condition: service_completed_successfully
    volumes:
      - shared:/shared
  api:
    build:
      context: ./api
    expose:
      - "8000"
    healthcheck:
      test: ["CMD", "test", "-e", "/tmp/up"]
      interval: 1s
      retries: 30
    volumes:
      - shared:/shared
      - ./site:/site:ro
    deploy:
      resources:
        limits:
          cpus: "0.5"
          memory: 256M
  seed:
    image: berth-base:bookworm
    command: ["sh", "-c", "echo seeded > /shared/seeded"]
    volumes:
      - shared:/shared
  clock:
    image: berth-base:bookworm
    command: ["sh", "-c", "while true; do date +%s > /shared/clock; sleep 1; done"]
    volumes:
      - shared:/shared
volumes:
  shared: {}
`,
  'orders/environment/api/Dockerfile': 'FROM berth-base:bookworm\nCOPY server.py /server.py\nCMD ["python3", "/server.py"]\n',
  'orders/environment/api/server.py': SERVER,
  'orders/environment/site/hello.txt': 'hello from the task folder\n',
  'orders/solution/solve.sh': `#!/bin/bash
set -e
python3 - <<'PY'
import json, urllib.request
def post(item):
    req = urllib.request.Request('http://api:8000/orders', data=json.dumps({'item': item}).encode(), method='POST')
    urllib.request.urlopen(req, timeout=5).read()
post('apple')
post('pear')
site = json.load(urllib.request.urlopen('http://api:8000/site', timeout=5))['site']
with open('/app/out.txt', 'w') as f:
    f.write(site + '\\n' + open('/shared/seeded').read() + open('/shared/from-api').read())
PY
`,
  'orders/tests/test.sh': `#!/bin/bash
fail() { echo "FAIL: $1"; echo 0 > /logs/verifier/reward.txt; exit 0; }
[ "$(cat /app/out.txt)" = "$(printf 'hello from the task folder\\nseeded\\napi was here')" ] || fail "out.txt: $(cat /app/out.txt)"
[ "$(cat /shared/gate)" = gated ] || fail "main started before api was healthy"
[ -s /shared/clock ] || fail "the clock service never ran"
python3 -c "import json, urllib.request, sys; sys.exit(json.load(urllib.request.urlopen('http://api:8000/stats'))['orders'] != 2)" || fail "api did not count 2 orders"
echo 1 > /logs/verifier/reward.txt
`,
};

/**
 * A named volume whose first files are the sidecar image's at its mount point (owner and mode too), and an anonymous
 * one of main's image: Docker copies them into the new volume, and so must the pod's loader.
 */
const VOLUME_TASK: Record<string, string> = {
  'volume-files/task.toml': '[environment]\ndocker_image = "berth-base:bookworm"\nworkdir = "/app"\n[agent]\ntimeout_sec = 60\n[verifier]\ntimeout_sec = 60\n',
  'volume-files/instruction.md': 'Look at /shared.\n',
  'volume-files/environment/docker-compose.yaml': `services:
  main:
    depends_on:
      store:
        condition: service_started
    volumes:
      - seeded:/shared
      - /etc/apt
  store:
    build:
      context: ./store
    command: ["sleep", "infinity"]
    volumes:
      - seeded:/seed
volumes:
  seeded: {}
`,
  'volume-files/environment/store/Dockerfile': 'FROM berth-base:bookworm\nRUN mkdir -p /seed/sub && echo from-the-image > /seed/sub/hello.txt && chown -R 1234:55 /seed && chmod 750 /seed && chmod 640 /seed/sub/hello.txt\n',
  'volume-files/solution/solve.sh': '#!/bin/bash\n{ cat /shared/sub/hello.txt; stat -c "%u:%g %a" /shared /shared/sub/hello.txt; test -e /etc/apt/sources.list.d && echo apt-kept; } > /app/out.txt\n',
  'volume-files/tests/test.sh': `#!/bin/bash
want="$(printf 'from-the-image\\n1234:55 750\\n1234:55 640\\napt-kept')"
if [ "$(cat /app/out.txt)" = "$want" ]; then echo 1 > /logs/verifier/reward.txt; else echo "got: $(cat /app/out.txt)"; echo 0 > /logs/verifier/reward.txt; fi
`,
};

/** Every file under `dir` by its path relative to it. */
function filesUnder(dir: string, prefix = ''): string[] {
  return readdirSync(dir).flatMap((f) => (statSync(join(dir, f)).isDirectory() ? filesUnder(join(dir, f), `${prefix}${f}/`) : [`${prefix}${f}`]));
}

/** The same dataset on each sandbox: the Compose task above and examples/compose-hello (the example the Docker tests run). */
describe.each(['docker', 'kubernetes'] as const)('a Compose task with a sidecar, hooks and artifacts, through a real batch on %s', (sandbox) => {
  let workers: TestCluster;

  beforeAll(async () => {
    const local = new DockerSandboxProvider(new Docker());
    const on = sandbox === 'kubernetes' ? await onCluster() : undefined;
    const provider = on ? new KubernetesSandboxProvider({ kubeConfig: on.kubeConfig, namespace, local, registryHost: on.registry }) : undefined;
    workers = await startTestWorkers(`kgroups-${sandbox}`, provider ? { provider } : {});
  }, FIRST_BUILD_TIMEOUT_MS);

  afterAll(async () => {
    await workers?.stop();
  }, 120_000);

  it('scores 1 on both tasks, the sidecar\'s artifacts and its hook\'s output come out, and nothing of the group is left', async () => {
    const dataset = writeDataset({ ...TASK, ...VOLUME_TASK });
    const resultsDir = mkdtempSync(join(tmpdir(), `berth-kgroups-${sandbox}-`));
    const handle = await startBatch({ dataset, agent: 'oracle', resultsDir, taskQueue: workers.taskQueue, client: workers.client });
    const hello = await startBatch({ dataset: join(examples, 'compose-hello'), agent: 'oracle', resultsDir: mkdtempSync(join(tmpdir(), `berth-kgroups-hello-${sandbox}-`)), taskQueue: workers.taskQueue, client: workers.client });
    const [summary, helloSummary] = await Promise.all([handle.wait(), hello.wait()]);
    const rows = [...summary.rows, ...helloSummary.rows].map((r) => ({ task_id: r.task_id, reward: r.reward, failure_kind: r.failure_kind, mask_sample: r.mask_sample }));
    expect(rows).toEqual([
      { task_id: 'orders', reward: 1, failure_kind: null, mask_sample: false },
      { task_id: 'volume-files', reward: 1, failure_kind: null, mask_sample: false },
      { task_id: 'compose-hello', reward: 1, failure_kind: null, mask_sample: false },
    ]);
    const trial = readdirSync(resultsDir).find((f) => f.startsWith('orders__'))!;
    const files = filesUnder(join(resultsDir, trial));
    const at = (name: string) => join(resultsDir, trial, files.find((f) => f.endsWith(name))!);
    // The sidecar's artifacts: its own log, and the file its collect hook wrote after the agent's turn.
    expect(readFileSync(at('orders.log'), 'utf8')).toBe('{"item": "apple"}\n{"item": "pear"}\n');
    expect(JSON.parse(readFileSync(at('stats.json'), 'utf8'))).toEqual({ orders: 2 });
    // The group removed as one: no pod of either episode on Kubernetes; no container, network or volume on Docker.
    for (const row of [...summary.rows, ...helloSummary.rows]) {
      if (sandbox === 'docker') {
        await groupLeftovers(`berth.workflow=${row.workflow_id}`);
        continue;
      }
      const core = cluster!.core;
      await waitUntil(async () => (await core.listNamespacedPod({ namespace })).items.every((p) => p.metadata?.annotations?.['berth.workflow'] !== row.workflow_id), 60_000, `no pod of ${row.workflow_id}`);
    }
  }, 600_000);
});
