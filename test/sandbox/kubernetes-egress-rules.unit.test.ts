import { dumpYaml, KubeConfig, type CoreV1Api, type V1Container, type V1Pod } from '@kubernetes/client-node';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { controllerDockerfile, packageFiles } from '../../src/sandbox/kubernetes/egress-image.ts';
import { EGRESS_CHAIN, filterTable, needsEgressController, rulesScript, startMode, type PodNetworkMode } from '../../src/sandbox/kubernetes/egress-rules.ts';
import { apiserverAddress, nodeAddress, PodEgress } from '../../src/sandbox/kubernetes/egress.ts';
import { NETWORK_LABEL, networkPolicies } from '../../src/sandbox/kubernetes/network-policy.ts';
import { singlePod } from '../../src/sandbox/kubernetes/pod-spec.ts';
import { EGRESS_NETWORK } from '../../src/sandbox/network-phase.ts';

// The pod's network per phase on Kubernetes (issue 23: "no-network, allowlist and public phases enforced inside the
// pod's network namespace"), the Docker path's semantics (docs/design.md section 7, Network): no-network leaves loopback
// alone, allowlist loopback and the worker's egress address (the proxy), public everything.

const GW = '10.229.255.1';

describe('the filter table of each mode', () => {
  it.each<[string, PodNetworkMode, 4 | 6, string | undefined, string[], string[]]>([
    ['public admits everything, both families', 'public', 4, undefined,
      [':INPUT ACCEPT', ':OUTPUT ACCEPT', ':FORWARD ACCEPT', `:${EGRESS_CHAIN} -`], ['-j REJECT', '-j DROP', '-A ']],
    ['no-network: loopback only, the rest refused at once', 'no-network', 4, undefined,
      [':INPUT DROP', ':OUTPUT DROP', '-A INPUT -i lo -j ACCEPT', '-A OUTPUT -o lo -j ACCEPT', '-A OUTPUT -j REJECT'], ['-d ', '-s ']],
    ['no-network over IPv6 too', 'no-network', 6, undefined, [':OUTPUT DROP', '-A OUTPUT -o lo -j ACCEPT', '-A OUTPUT -j REJECT'], ['-d ']],
    ['allowlist: loopback and the worker\'s address, nothing else', 'allowlist', 4, GW,
      ['-A OUTPUT -o lo -j ACCEPT', `-A OUTPUT -d ${GW}/32 -j ACCEPT`, `-A INPUT -s ${GW}/32 -j ACCEPT`, '-A OUTPUT -j REJECT'], []],
    ['allowlist over IPv6 with an IPv4 worker address: loopback only', 'allowlist', 6, GW, ['-A OUTPUT -o lo -j ACCEPT', '-A OUTPUT -j REJECT'], [GW]],
    ['allowlist with an IPv6 worker address', 'allowlist', 6, 'fd00::1', ['-A OUTPUT -d fd00::1/128 -j ACCEPT'], []],
  ])('%s', (_what, mode, family, gateway, has, lacks) => {
    const table = filterTable(mode, family, gateway);
    expect(table.startsWith('*filter\n')).toBe(true);
    expect(table.endsWith('COMMIT\n')).toBe(true);
    for (const line of has) expect(table).toContain(line);
    for (const line of lacks) expect(table).not.toContain(line);
    // The catch-all refusal is the last rule: nothing after it admits more.
    if (mode !== 'public') expect(table.trimEnd().split('\n').at(-2)).toBe('-A OUTPUT -j REJECT');
  });

  it('an allowlist without the worker\'s address is an error, not an open pod', () => {
    expect(() => filterTable('allowlist', 4)).toThrow(/needs the worker's egress address/);
    expect(() => filterTable('allowlist', 4, 'proxy.local')).toThrow(/needs the worker's egress address/);
  });
});

describe('the script the controller runs', () => {
  it('replaces both families\' tables; at the start only when the rules are not Berth\'s yet', () => {
    const phase = rulesScript('no-network', undefined);
    expect(phase).toContain('xtables-nft-multi iptables-restore <<\'BERTH_V4\'');
    expect(phase).toContain('xtables-nft-multi ip6tables-restore <<\'BERTH_V6\'');
    expect(phase).not.toContain(`-L ${EGRESS_CHAIN}`);
    const start = rulesScript('public', undefined, true);
    // A controller restarted mid-episode (the sandbox may kill it: shared PID namespace) must not widen the phase.
    expect(start.split('\n')[1]).toBe(`if xtables-nft-multi iptables -n -L ${EGRESS_CHAIN} >/dev/null 2>&1; then exit 0; fi`);
  });

  it.each<[string, PodNetworkMode]>([['bridge', 'public'], ['none', 'no-network'], [EGRESS_NETWORK, 'allowlist']])('a pod created on %s starts %s', (network, mode) => {
    expect(startMode(network, EGRESS_NETWORK)).toBe(mode);
  });

  it('names the networks a pod can be on when asked for another', () => {
    expect(() => startMode('my-net', EGRESS_NETWORK)).toThrow(/no network named "my-net".*bridge, on none, or on berth-egress/);
  });

  it.each([
    [{ network: 'bridge' }, false],
    [{ network: 'bridge', networkPhases: true }, true],
    [{ network: 'none' }, true],
    [{ network: EGRESS_NETWORK }, true],
  ])('a pod on %j needs the controller: %s', (spec, want) => {
    expect(needsEgressController(spec)).toBe(want);
  });
});

describe('the controller in the pod', () => {
  const spec = {
    name: 'berth/b/t/1', labels: { batch: 'b', workflowId: 'w', role: 'agent' }, image: 'img', keepAlive: ['sleep', 'infinity'],
    env: {}, user: 'root', workdir: '/', network: 'none',
  };
  // No cluster is asked: a pod created on none needs no worker address, and the image is given.
  const egress = new PodEgress({ kubeConfig: new KubeConfig(), core: {} as CoreV1Api, namespace: 'ns', image: () => Promise.resolve('reg/berth/berth-egress-controller@sha256:1') });
  let pod: V1Pod;
  let controller: V1Container;
  beforeAll(async () => {
    pod = await egress.withController(singlePod(spec as Parameters<typeof singlePod>[0]), spec);
    controller = pod.spec!.initContainers![0]!;
  });

  it('is a native sidecar with NET_ADMIN alone, started before the sandbox\'s container, which has none', () => {
    expect(controller).toMatchObject({ name: 'egress', restartPolicy: 'Always', image: 'reg/berth/berth-egress-controller@sha256:1' });
    expect(controller.securityContext).toMatchObject({ allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'], add: ['NET_ADMIN'] } });
    expect(pod.spec!.containers).toHaveLength(1);
    expect(pod.spec!.containers[0]!.securityContext?.capabilities).toBeUndefined();
    // The sandbox's container starts once the postStart hook saw the first rules' exit code, and fails with it.
    expect(controller.lifecycle?.postStart?.exec?.command?.join(' ')).toContain('exit "$(cat /tmp/berth-egress.rc)"');
  });

  it('keeps itself alive with something else than the sandbox\'s `sleep infinity`, which readiness looks for', () => {
    expect(controller.command!.join(' ')).not.toContain('sleep infinity');
    expect(controller.command!.at(-1)).toContain('iptables-restore');
  });

  it('a pod without network phases has no init containers at all; one on the bridge with phases starts public', async () => {
    const bridge = { ...spec, network: 'bridge' };
    expect((await egress.withController(singlePod(bridge as Parameters<typeof singlePod>[0]), bridge)).spec!.initContainers).toBeUndefined();
    const phased = { ...bridge, networkPhases: true };
    const started = (await egress.withController(singlePod(phased as Parameters<typeof singlePod>[0]), phased)).spec!.initContainers![0]!;
    expect(started.command!.at(-1)).toContain(':OUTPUT ACCEPT');
    expect(controller.command!.at(-1)).toContain(':OUTPUT DROP');
  });
});

describe('the NetworkPolicy beside the rules (for CNIs that enforce it), as the apiserver gets it', () => {
  const [offline, allowlist] = networkPolicies('ns', GW).map((p) => parse(dumpYaml(p)) as {
    metadata: { name: string; namespace: string };
    spec: { podSelector: { matchLabels: Record<string, string> }; policyTypes: string[]; ingress: unknown[]; egress: unknown[] };
  });

  it('denies every packet in and out of a no-network pod', () => {
    expect(offline!.metadata).toMatchObject({ name: 'berth-no-network', namespace: 'ns' });
    expect(offline!.spec).toEqual({
      podSelector: { matchLabels: { 'berth.sandbox': 'single', [NETWORK_LABEL]: 'no-network' } }, policyTypes: ['Ingress', 'Egress'], ingress: [], egress: [],
    });
  });

  it('admits only the worker\'s address for an allowlist pod, both ways', () => {
    expect(allowlist!.spec).toEqual({
      podSelector: { matchLabels: { 'berth.sandbox': 'single', [NETWORK_LABEL]: 'allowlist' } },
      policyTypes: ['Ingress', 'Egress'],
      ingress: [{ from: [{ ipBlock: { cidr: `${GW}/32` } }] }],
      egress: [{ to: [{ ipBlock: { cidr: `${GW}/32` } }] }],
    });
  });

  it('refuses a worker address that is not an IP address', () => {
    expect(() => networkPolicies('ns', 'worker.local')).toThrow(/not an IP address/);
  });
});

describe('where the controller comes from and where pods reach the worker', () => {
  it('ships the packages\' files, not their documentation nor the root', () => {
    expect(packageFiles('/.\n/usr\n/usr/sbin/xtables-nft-multi\n/usr/share/doc/iptables/copyright\n/usr/sbin/xtables-nft-multi\n/usr/lib/x86_64-linux-gnu/libmnl.so.0\n'))
      .toEqual(['usr', 'usr/lib/x86_64-linux-gnu/libmnl.so.0', 'usr/sbin/xtables-nft-multi']);
    expect(controllerDockerfile('berth-base:bookworm')).toBe('FROM berth-base:bookworm\nADD iptables.tar /\nRUN ldconfig && xtables-nft-multi iptables -V\nLABEL berth.egress-controller="1"\n');
  });

  it.each([
    [[{ status: { addresses: [{ type: 'Hostname', address: 'node-1' }, { type: 'InternalIP', address: '10.0.0.5' }] } }], '10.0.0.5'],
    [[{ status: { addresses: [{ type: 'ExternalIP', address: '203.0.113.9' }] } }], '203.0.113.9'],
    [[{ status: { addresses: [{ type: 'Hostname', address: 'node-1' }] } }], null],
    [[], null],
  ])('a node address from %j: %s', (nodes, want) => {
    expect(nodeAddress(nodes)).toBe(want);
  });

  it.each<[string, Record<string, string>, string, string | null]>([
    ['in a pod: the apiserver Service', { KUBERNETES_SERVICE_HOST: '10.96.0.1' }, 'https://10.96.0.1:443', '10.96.0.1'],
    ['outside, an apiserver at an address', {}, 'https://192.168.1.20:6443', '192.168.1.20'],
    ['an IPv6 apiserver', {}, 'https://[fd00::5]:6443', 'fd00::5'],
    ['a loopback apiserver tells nothing about where pods are', {}, 'https://127.0.0.1:16443', null],
    ['nor does a name', {}, 'https://k8s.example.com', null],
  ])('when nodes cannot be listed, %s', (_what, env, server, want) => {
    expect(apiserverAddress({ getCurrentCluster: () => ({ name: 'c', server, skipTLSVerify: false }) }, env)).toBe(want);
  });
});
