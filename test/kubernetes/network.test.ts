import { CoreV1Api, NetworkingV1Api } from '@kubernetes/client-node';
import Docker from 'dockerode';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DockerSandboxProvider, KubernetesSandboxProvider } from '../../src/sandbox/index.ts';
import { localAddressToward } from '../../src/sandbox/kubernetes/egress.ts';
import { LABEL_ROLE } from '../../src/sandbox/names.ts';
import type { ResultRow } from '../../src/workflows/types.ts';
import { FIRST_BUILD_TIMEOUT_MS, useLocalCluster, type LocalCluster } from '../helpers/kubernetes.ts';
import { PROBE, PROBING_SIDECAR_COMPOSE, SIDE } from '../helpers/network.ts';
import { rowsByTask, startTestWorkers, type TestCluster } from '../helpers/temporal.ts';
import { waitUntil } from '../helpers/worker-process.ts';

// Network per phase on the Kubernetes sandbox (issue 23: "no-network, allowlist and public phases enforced inside the
// pod's network namespace … so it works without a NetworkPolicy-enforcing CNI"; the local cluster's bridge CNI enforces
// none, so what holds here is the pods' own rules). The same dataset runs as a real batch on Docker and on the local
// cluster, and each task checks from inside its sandbox what it can and cannot reach (docs/design.md section 7, Network):
// the "outside" is an HTTP server of this test on the host, at two of the host's addresses that both a Docker sandbox
// and a pod route to, so an allowlist can admit one and refuse the other.

interface StepSpec { name: string; toml?: string; agent: string; verify: string }

const VERIFY_HEAD = '#!/bin/bash\nsource /tests/probe.sh\nok=1\nfail() { echo "FAILED: $*"; ok=0; }\n';
const VERIFY_TAIL = 'echo $ok > /logs/verifier/reward.txt\n';

/** A multi-step task whose solve.sh records probes and whose test.sh rewards 1 when every expectation holds. */
const multiStep = (id: string, environment: string, top: string, steps: StepSpec[]): Record<string, string> => ({
  [`${id}/task.toml`]: `[environment]\ndocker_image = "berth-base:bookworm"\nworkdir = "/app"\n${environment}${top}` +
    steps.map((s) => `[[steps]]\nname = "${s.name}"\n${s.toml ?? ''}`).join(''),
  [`${id}/tests/probe.sh`]: PROBE,
  ...Object.fromEntries(steps.flatMap((s) => [
    [`${id}/steps/${s.name}/instruction.md`, `${s.name}\n`],
    [`${id}/steps/${s.name}/solution/solve.sh`, `#!/bin/bash\n${PROBE}\n${s.agent}\n`],
    [`${id}/steps/${s.name}/tests/test.sh`, `${VERIFY_HEAD}${s.verify}\n${VERIFY_TAIL}`],
  ])),
});

/** A single-step task: `toml` after [environment], the agent's probes, the verifier's expectations. */
const singleStep = (id: string, toml: string, agent: string, verify: string): Record<string, string> => ({
  [`${id}/task.toml`]: `[environment]\ndocker_image = "berth-base:bookworm"\nworkdir = "/app"\n${toml}`,
  [`${id}/instruction.md`]: 'probe\n',
  [`${id}/tests/probe.sh`]: PROBE,
  [`${id}/solution/solve.sh`]: `#!/bin/bash\n${PROBE}\n${agent}\n`,
  [`${id}/tests/test.sh`]: `${VERIFY_HEAD}${verify}\n${VERIFY_TAIL}`,
});

const expectLine = (file: string, want: string) => `[ "$(cat ${file})" = "${want}" ] || fail "${file}: $(cat ${file}), wanted ${want}"`;
const check = (url: string, mode: string, want: string) => `got=$(probe ${url} ${mode}); [ "$got" = "${want}" ] || fail "${url} ${mode}: $got, wanted ${want}"`;
/** Loopback stays in every mode: a server of the sandbox's own on 127.0.0.1 answers it. */
const LOOPBACK = 'python3 -m http.server 9999 --bind 127.0.0.1 >/dev/null 2>&1 & srv=$!; for i in $(seq 50); do [ "$(probe http://127.0.0.1:9999/ direct)" = reach ] && break; sleep 0.1; done';
/** The sandbox's processes hold no NET_ADMIN (bit 12 of CapEff): they cannot change the rules. */
const NO_NET_ADMIN = 'python3 -c "import sys; c = int([l for l in open(\'/proc/self/status\') if l.startswith(\'CapEff\')][0].split()[1], 16); sys.exit(1 if c & (1 << 12) else 0)" || fail "NET_ADMIN held"';

function dataset(a: string, b: string, aIp: string): Record<string, string> {
  return {
    ...singleStep('public', '',
      `{ probe ${a} direct; probe ${b} direct; } > /app/agent`,
      `${expectLine('/app/agent', 'reach\nreach')}\n${check(b, 'direct', 'reach')}`),
    ...singleStep('no-network', 'network_mode = "no-network"\n',
      `${LOOPBACK}\n{ probe http://127.0.0.1:9999/ direct; probe ${a} direct; probe ${b} direct; } > /app/agent; kill $srv`,
      `${expectLine('/app/agent', 'reach\nblocked\nblocked')}\n${check(a, 'direct', 'blocked')}\n${NO_NET_ADMIN}`),
    // The allowlist admits a through the egress proxy and refuses b there; its public verifier reaches b directly and
    // through the proxy settings the sandbox still carries. The direct probes are printed for the test to read: on
    // Docker the egress network routes to the host's own addresses (where this test's server is), so only the pod's
    // are asserted (nothing but the worker's egress address).
    ...singleStep('allowlist', `[agent]\nnetwork_mode = "allowlist"\nallowed_hosts = ["${aIp}"]\n[verifier]\nnetwork_mode = "public"\n`,
      `${LOOPBACK}\n{ probe ${a} env; probe ${b} env; probe http://127.0.0.1:9999/ direct; probe ${a} direct; probe ${b} direct; } > /app/agent; kill $srv`,
      `${expectLine('/app/agent | head -3', 'reach\nrefused:403\nreach')}\necho "direct: $(tail -2 /app/agent | tr '\\n' ' ')"\n` +
      `${check(b, 'env', 'reach')}\n${check(b, 'direct', 'reach')}\n${NO_NET_ADMIN}`),
    // Switching per phase: an agent cut off while its verifier reaches the server, then the reverse; and an offline
    // environment whose agent goes online and whose verifier is offline again (the sandbox starts cut off).
    ...multiStep('switching', '', '', [
      { name: 'offline-agent', toml: '[steps.agent]\nnetwork_mode = "no-network"\n',
        agent: `probe ${a} direct > /app/agent1`, verify: `${expectLine('/app/agent1', 'blocked')}\n${check(a, 'direct', 'reach')}` },
      { name: 'offline-verifier', toml: '[steps.verifier]\nnetwork_mode = "no-network"\n',
        agent: `probe ${a} direct > /app/agent2`, verify: `${expectLine('/app/agent2', 'reach')}\n${check(a, 'direct', 'blocked')}` },
    ]),
    ...singleStep('offline-env', 'network_mode = "no-network"\n[agent]\nnetwork_mode = "public"\n',
      `probe ${a} direct > /app/agent`, `${expectLine('/app/agent', 'reach')}\n${check(a, 'direct', 'blocked')}`),
    // A separate verifier whose own sandbox is an allowlist: it starts with no way out but the worker's address, and
    // its phase admits a through the proxy and refuses b there; the agent's sandbox stays public.
    ...singleStep('separate-allowlist',
      `[verifier]\nenvironment_mode = "separate"\n[verifier.environment]\ndocker_image = "berth-base:bookworm"\nnetwork_mode = "allowlist"\nallowed_hosts = ["${aIp}"]\n`,
      `probe ${a} direct > /logs/artifacts/agent`,
      `${check(a, 'env', 'reach')}\n${check(b, 'env', 'refused:403')}\n${expectLine('/logs/artifacts/agent', 'reach')}`),
    // Overlay RUN lines are build steps, online whatever the task's network_mode: the pod starts public and is put on
    // no network after them (putOnNetwork), for its agent and its verifier.
    ...singleStep('overlay-online', 'network_mode = "no-network"\n', `probe ${a} direct > /app/agent`,
      `${expectLine('/overlay-probe', 'reach')}\n${expectLine('/app/agent', 'blocked')}\n${check(a, 'direct', 'blocked')}`),
    'overlay-online/task.toml': '[environment]\nworkdir = "/app"\nnetwork_mode = "no-network"\n',
    'overlay-online/environment/Dockerfile': `FROM berth-base:bookworm\nRUN python3 -c "import urllib.request; urllib.request.urlopen('${a}', timeout=10).read(); open('/overlay-probe', 'w').write('reach')"\n`,
    // A Compose group (main and a probing sidecar) switched per phase: every service cut off from outside for the
    // agent while main still reaches the sidecar by name, the verifier online again, then the reverse (on Kubernetes
    // the group's one pod shares one network namespace, its loopback kept in every mode; on Docker its own network).
    ...multiStep('group-switching', '', '', [
      { name: 'offline-agent', toml: '[steps.agent]\nnetwork_mode = "no-network"\n',
        agent: `${SIDE}\nprobe ${a} direct > /app/a1\nprobe http://side:8080/ direct > /app/s1\nside ${a} direct > /app/sa1`,
        verify: `${SIDE}\n${expectLine('/app/a1', 'blocked')}\n${expectLine('/app/s1', 'reach')}\n${expectLine('/app/sa1', 'blocked')}\n${check(a, 'direct', 'reach')}\n${sideCheck(a, 'direct', 'reach')}` },
      { name: 'offline-verifier', toml: '[steps.verifier]\nnetwork_mode = "no-network"\n',
        agent: `${SIDE}\nprobe ${a} direct > /app/a2\nside ${a} direct > /app/sa2`,
        verify: `${SIDE}\n${expectLine('/app/a2', 'reach')}\n${expectLine('/app/sa2', 'reach')}\n${check(a, 'direct', 'blocked')}\n${sideCheck(a, 'direct', 'blocked')}\n${check('http://side:8080/', 'direct', 'reach')}` },
    ]),
    'group-switching/environment/docker-compose.yaml': PROBING_SIDECAR_COMPOSE,
    // An allowlist phase for every service of a group, through the proxy each one carries (the sidecar reached by name,
    // past the proxy); the public verifier reaches b again from both.
    ...singleStep('group-allowlist', `[agent]\nnetwork_mode = "allowlist"\nallowed_hosts = ["${aIp}"]\n[verifier]\nnetwork_mode = "public"\n`,
      `${SIDE}\n{ probe ${a} env; probe ${b} env; probe http://side:8080/ env; side ${a} env; side ${b} env; } > /app/agent`,
      `${SIDE}\n${expectLine('/app/agent', 'reach\nrefused:403\nreach\nreach\nrefused:403')}\n${check(b, 'direct', 'reach')}\n${sideCheck(b, 'direct', 'reach')}`),
    'group-allowlist/environment/docker-compose.yaml': PROBING_SIDECAR_COMPOSE,
  };
}

/** The same check asked of the group's sidecar. */
const sideCheck = (url: string, mode: string, want: string) => `got=$(side ${url} ${mode}); [ "$got" = "${want}" ] || fail "side ${url} ${mode}: $got, wanted ${want}"`;

/** What the comparison looks at: the reward per turn and whether the row is clean. */
const outcome = (row: ResultRow | undefined) => row && { reward: row.reward, failure: row.failure_reason, turns: row.turns.map((t) => [t.step, t.reward]) };

describe('network per phase on the Kubernetes sandbox, against the same tasks on Docker', () => {
  let cluster: LocalCluster;
  let server: Server;
  let docker: TestCluster | undefined;
  let kubernetes: TestCluster | undefined;
  let namespace = '';
  let onDocker = new Map<string, ResultRow>();
  let onKubernetes = new Map<string, ResultRow>();
  let taskIds: string[] = [];
  /** Each pod seen during the batch: its task, whether it had the egress controller, and that controller's capabilities. */
  const seen = new Map<string, { task: string; controller: boolean; caps: unknown; mainCaps: unknown }>();

  beforeAll(async () => {
    cluster = await useLocalCluster();
    server = createServer((_req, res) => res.end('outside\n'));
    await new Promise<void>((r) => server.listen(0, '0.0.0.0', () => r()));
    const port = (server.address() as { port: number }).port;
    // Two host addresses: the one toward the world, and the Docker bridge's gateway (a pod reaches both on the host).
    const aIp = await localAddressToward('203.0.113.1');
    const [bridge] = await new DockerSandboxProvider(new Docker()).network.defaultRanges();
    const bIp = bridge?.gateway ?? await localAddressToward(bridge!.subnet!.replace(/\.\d+\/\d+$/, '.2'));
    expect(aIp).not.toBe(bIp);
    const files = dataset(`http://${aIp}:${port}/`, `http://${bIp}:${port}/`, aIp);
    taskIds = [...new Set(Object.keys(files).map((f) => f.split('/')[0]!))].sort();

    namespace = `berth-knet-${randomBytes(3).toString('hex')}`;
    await cluster.core.createNamespace({ body: { metadata: { name: namespace } } });
    // Pods are admitted once the namespace's default service account exists.
    await waitUntil(() => cluster.core.readNamespacedServiceAccount({ name: 'default', namespace }).then(() => true, () => false), 60_000, 'the namespace\'s service account');
    const local = new DockerSandboxProvider(new Docker());
    // With NetworkPolicy objects too (the bridge CNI does not enforce them: the pods' own rules are what is probed).
    const provider = new KubernetesSandboxProvider({ kubeConfig: cluster.kubeConfig, namespace, local, registryHost: cluster.registry, networkPolicies: true });
    docker = await startTestWorkers('k-net-docker');
    kubernetes = await startTestWorkers('k-net-k8s', { provider });
    let watching = true;
    const watch = (async () => {
      while (watching) {
        for (const p of (await cluster.core.listNamespacedPod({ namespace })).items) {
          const controller = p.spec?.initContainers?.find((c) => c.name === 'egress');
          seen.set(p.metadata!.name!, {
            task: `${(p.metadata?.annotations?.['berth.workflow'] ?? '').split('/').at(-2) ?? ''}/${p.metadata?.annotations?.[LABEL_ROLE] ?? ''}`,
            controller: controller !== undefined, caps: controller?.securityContext?.capabilities, mainCaps: p.spec?.containers[0]?.securityContext?.capabilities,
          });
        }
        await new Promise((r) => setTimeout(r, 200));
      }
    })();
    try {
      [onDocker, onKubernetes] = await Promise.all([rowsByTask(docker, files, 'berth-knet-docker-'), rowsByTask(kubernetes, files, 'berth-knet-k8s-')]);
    } finally {
      watching = false;
      await watch;
    }
  }, FIRST_BUILD_TIMEOUT_MS);

  afterAll(async () => {
    await docker?.stop();
    await kubernetes?.stop();
    await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
    if (namespace) await cluster.core.deleteNamespace({ name: namespace }).catch(() => undefined);
    await cluster?.release();
  }, 120_000);

  it.each(['public', 'no-network', 'allowlist', 'switching', 'offline-env', 'overlay-online', 'separate-allowlist', 'group-allowlist'])('%s: every expectation from inside the pod holds, as on Docker', (id) => {
    const k8s = onKubernetes.get(id);
    expect(k8s?.failure_reason ?? null, JSON.stringify(k8s)).toBeNull();
    expect(k8s?.reward).toBe(1);
    expect(outcome(k8s)).toEqual(outcome(onDocker.get(id)));
  });

  // Not compared with Docker: a Docker group's own network is internal but its gateway is the host, so its services
  // still reach the host's own addresses (this test's server) in a no-network phase; Docker's side of this switch is
  // test/e2e/compose-network-phases.test.ts, whose outside is a container on the engine's bridge.
  it('group-switching: every service of the group cut off and back per phase, the sidecar reached by name throughout', () => {
    const k8s = onKubernetes.get('group-switching');
    expect(k8s?.failure_reason ?? null, JSON.stringify(k8s)).toBeNull();
    expect(k8s?.turns.map((t) => [t.step, t.reward])).toEqual([['offline-agent', 1], ['offline-verifier', 1]]);
  });

  it('a pod has the egress controller (NET_ADMIN alone) when its network is not public throughout, and only then', () => {
    const byTask = new Map([...seen.values()].map((p) => [p.task, p]));
    const publicThroughout = ['public/agent', 'separate-allowlist/agent'];
    expect([...byTask.keys()].sort()).toEqual([...taskIds.map((t) => `${t}/agent`), 'separate-allowlist/verifier'].sort());
    for (const key of publicThroughout) expect(byTask.get(key), key).toMatchObject({ controller: false });
    for (const key of [...byTask.keys()].filter((k) => !publicThroughout.includes(k))) {
      expect(byTask.get(key), key).toMatchObject({ controller: true, caps: { drop: ['ALL'], add: ['NET_ADMIN'] } });
    }
    for (const p of byTask.values()) expect(p.mainCaps).toBeUndefined();
  });

  it('an allowlist pod reaches nothing directly, not even the host\'s own addresses (Docker\'s egress network does)', () => {
    const printed = (row: ResultRow) => readFileSync(join(row.logs_dir!, 'turn-1', 'verifier', 'test-stdout.txt'), 'utf8');
    expect(printed(onKubernetes.get('allowlist')!)).toContain('direct: blocked blocked ');
    expect(printed(onDocker.get('allowlist')!)).toMatch(/direct: \w+ \w+ /);
  });

  it('every task of the dataset ran on both, and the switching task scored each step', () => {
    expect([...onKubernetes.keys()].sort()).toEqual(taskIds);
    expect([...onDocker.keys()].sort()).toEqual(taskIds);
    expect(onKubernetes.get('switching')!.turns.map((t) => [t.step, t.reward])).toEqual([['offline-agent', 1], ['offline-verifier', 1]]);
  });

  it('the namespace has the NetworkPolicy objects, selecting pods by their phase\'s label', async () => {
    const policies = (await cluster.kubeConfig.makeApiClient(NetworkingV1Api).listNamespacedNetworkPolicy({ namespace })).items;
    expect(policies.map((p) => [p.metadata?.name, p.spec?.podSelector?.matchLabels?.['berth.network']]).sort()).toEqual([
      ['berth-allowlist', 'allowlist'], ['berth-no-network', 'no-network'],
    ]);
  });

  it('no pod of the batch is left in the namespace', async () => {
    await waitUntil(async () => (await cluster.kubeConfig.makeApiClient(CoreV1Api).listNamespacedPod({ namespace })).items.length === 0, 60_000, 'no pod left');
  });
});
