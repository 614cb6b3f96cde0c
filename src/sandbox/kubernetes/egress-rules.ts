// Pure rules of a pod's network per phase on Kubernetes (issue 23; docs/design.md section 7, Network). All containers of a
// pod share one network namespace, so its iptables rules are the pod's network: an egress controller (a native sidecar
// with NET_ADMIN, which the sandbox's container lacks) sets them before the sandbox's container starts and again at
// each phase, through the exec API (it listens on nothing the sandbox could reach). Modes mirror the Docker path:
// no-network leaves only loopback; allowlist leaves loopback and the worker's egress address (where the egress proxy
// serves the phase's allowed_hosts, as on Docker's internal egress network, whose one way out is its gateway); public
// admits everything. Rules do not depend on the CNI: they work on clusters that do not enforce NetworkPolicy.
import type { V1Container } from '@kubernetes/client-node';
import { isIP } from 'node:net';
import type { PhaseNetwork } from '../network-phase.ts';

export type PodNetworkMode = PhaseNetwork['mode'];

export const EGRESS_CONTAINER = 'egress';
/** An empty chain that marks the rules as Berth's: a restarted controller leaves rules that are already there. */
export const EGRESS_CHAIN = 'BERTH-EGRESS';
/** iptables from Debian's package, its nf_tables backend (Debian's default) named explicitly. */
const IPTABLES = 'xtables-nft-multi';
/** Written by the controller's start once the first rules are in place (its postStart hook waits for it). */
const STARTED_FILE = '/tmp/berth-egress.rc';
const OUTPUT_FILE = '/tmp/berth-egress.out';

/** The `filter` table of one address family for `mode`, as iptables-restore reads it (the whole table is replaced). */
export function filterTable(mode: PodNetworkMode, family: 4 | 6, gateway?: string): string {
  if (mode === 'allowlist' && (!gateway || isIP(gateway) === 0)) throw new Error(`an allowlist pod needs the worker's egress address (got ${JSON.stringify(gateway)})`);
  const policy = mode === 'public' ? 'ACCEPT' : 'DROP';
  const lines = ['*filter', `:INPUT ${policy} [0:0]`, `:FORWARD ${policy} [0:0]`, `:OUTPUT ${policy} [0:0]`, `:${EGRESS_CHAIN} - [0:0]`];
  if (mode !== 'public') {
    lines.push('-A INPUT -i lo -j ACCEPT', '-A OUTPUT -o lo -j ACCEPT');
    if (mode === 'allowlist' && isIP(gateway!) === family) {
      const host = `${gateway}/${family === 4 ? 32 : 128}`;
      // Stateless on purpose: no conntrack module needed; the worker's address is the one peer in either direction.
      lines.push(`-A INPUT -s ${host} -j ACCEPT`, `-A OUTPUT -d ${host} -j ACCEPT`);
    }
    // Refused at once, as a Docker sandbox with no route out fails at once (DROP would make every attempt time out).
    lines.push('-A OUTPUT -j REJECT');
  }
  lines.push('COMMIT');
  return `${lines.join('\n')}\n`;
}

/**
 * The shell script the controller runs to put the pod in `mode` (both families; each table is replaced atomically).
 * `onlyIfNew`: leave rules that are already Berth's (a controller restarted mid-episode must not widen a phase).
 */
export function rulesScript(mode: PodNetworkMode, gateway: string | undefined, onlyIfNew = false): string {
  const lines = ['set -e'];
  if (onlyIfNew) lines.push(`if ${IPTABLES} iptables -n -L ${EGRESS_CHAIN} >/dev/null 2>&1; then exit 0; fi`);
  lines.push(`${IPTABLES} iptables-restore <<'BERTH_V4'`, filterTable(mode, 4, gateway).trimEnd(), 'BERTH_V4');
  lines.push(`${IPTABLES} ip6tables-restore <<'BERTH_V6'`, filterTable(mode, 6, gateway).trimEnd(), 'BERTH_V6');
  return `${lines.join('\n')}\n`;
}

/** The mode a sandbox created on `network` starts in: the bridge is public, none is no-network, the egress network an allowlist with nothing admitted yet. */
export function startMode(network: string, egressNetwork: string): PodNetworkMode {
  if (network === 'bridge') return 'public';
  if (network === 'none') return 'no-network';
  if (network === egressNetwork) return 'allowlist';
  throw new Error(`the Kubernetes sandbox has no network named ${JSON.stringify(network)}: a pod is on the bridge, on none, or on ${egressNetwork}`);
}

/** Whether a pod needs the egress controller: it does not start public, or its network changes per phase. */
export const needsEgressController = (spec: { network: string; networkPhases?: boolean }): boolean => spec.network !== 'bridge' || spec.networkPhases === true;

/**
 * The controller: a native sidecar (an init container that keeps running), so the sandbox's container starts only
 * once its postStart hook saw the first rules in place; restarted by the kubelet if it ends. Root with NET_ADMIN alone.
 * Its keep-alive is not `sleep infinity`, which the driver's readiness check looks for in the shared PID namespace.
 */
export function egressContainer(image: string, startScript: string): V1Container {
  return {
    name: EGRESS_CONTAINER,
    image,
    imagePullPolicy: 'IfNotPresent',
    restartPolicy: 'Always',
    // A failure's output is also the container's termination message (its log is gone once the kubelet restarts it).
    command: ['/bin/sh', '-c', [
      `sh -c "$1" berth-egress > ${OUTPUT_FILE} 2>&1; rc=$?; cat ${OUTPUT_FILE}`,
      `[ "$rc" = 0 ] || cp ${OUTPUT_FILE} /dev/termination-log`,
      `echo "$rc" > ${STARTED_FILE}; exec sleep 2147483647`,
    ].join('\n'), 'berth-egress', startScript],
    lifecycle: {
      postStart: { exec: { command: ['/bin/sh', '-c', `while [ ! -e ${STARTED_FILE} ]; do sleep 0.05; done; exit "$(cat ${STARTED_FILE})"`] } },
    },
    securityContext: {
      runAsUser: 0, runAsGroup: 0, allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'], add: ['NET_ADMIN'] },
    },
    resources: { requests: { cpu: '10m', memory: '16Mi' }, limits: { memory: '64Mi' } },
  };
}
