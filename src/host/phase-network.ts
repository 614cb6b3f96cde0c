// The network per phase, for the activities (docs/design.md section 7, Network): each activity puts the sandbox on the
// network of the phase it is about to run (the step's setup and collect hooks: the environment's baseline; the agent:
// the agent phase's; a shared test.sh: the verifier phase's), reading nothing from earlier attempts, so a worker
// restarted between phases applies the right one. Tasks whose phases all share one policy never switch.
import { join } from 'node:path';
import {
  EgressPolicies, EgressProxy,
  type ApplyNetworkOptions, type EgressNetwork, type PhaseNetwork, type SandboxProvider, type SandboxHandle, type SandboxSpec,
} from '../sandbox/index.ts';
import { homePath } from '../config/paths.ts';
import { isInstalledAgent } from '../agents/index.ts';
import { agentSandboxNetworking, phasePolicyFor, type NetworkPolicy, type Phase, type Task } from '../task/index.ts';
import type { VerifyNetwork } from '../verify/index.ts';
import { OnDemand } from './on-demand.ts';

export interface Egress {
  network: EgressNetwork;
  policies: EgressPolicies;
  proxy: EgressProxy;
}

/** What switching a sandbox's network needs: its engine, and that engine's egress, made on first use. */
export interface NetworkDeps {
  provider: SandboxProvider;
  egress: OnDemand<Egress>;
}

/** A worker's view of its engine's egress network and proxy (the proxy is served once per host, see egress-proxy.ts). */
export function workerEgress(provider: SandboxProvider): OnDemand<Egress> {
  return new OnDemand(async () => {
    const network = await provider.network.egress();
    const dir = homePath('egress', network.id.slice(0, 12));
    const policies = new EgressPolicies(join(dir, 'policies'));
    const proxy = new EgressProxy({ host: network.gateway, portFile: join(dir, 'port'), policies, owns: (ip, c) => provider.network.holds(network.name, ip, c) });
    return { network, policies, proxy };
  });
}

/** Whether the episode's agent calls its model from inside the sandbox (through the gateway): an installed agent. */
export const modelInSandbox = (agent: string | undefined): boolean => agent !== undefined && isInstalledAgent(agent);

/**
 * What a sandbox with allowlist phases carries in its environment: the proxy for HTTP(S), nothing for loopback and
 * the host's own address on the egress network (where the model gateway is also served), nor, in a group, for the
 * services' names: they are reached on the group's own network.
 */
export function proxyEnv(url: string, direct: readonly string[] = []): Record<string, string> {
  const none = ['localhost', '127.0.0.1', '::1', ...direct].join(',');
  return { HTTP_PROXY: url, HTTPS_PROXY: url, http_proxy: url, https_proxy: url, NO_PROXY: none, no_proxy: none };
}

const toPhase = (p: NetworkPolicy): PhaseNetwork => ({ mode: p.network_mode, hosts: p.allowed_hosts });

/** A fresh sandbox's create-time network for `policy`, its proxy settings, and its egress when it needs one. */
async function startingNetwork(deps: NetworkDeps, policy: NetworkPolicy, needsEgressNetwork: boolean, carriesProxy: boolean) {
  if (!needsEgressNetwork && !carriesProxy) return { network: policy.network_mode === 'no-network' ? 'none' : 'bridge', env: {}, egress: undefined };
  const e = await deps.egress.get();
  const env = carriesProxy ? proxyEnv(await e.proxy.start(), [e.network.gateway]) : {};
  // Until its phase is applied, a sandbox that may switch starts on the egress network with no allowlist: no way out.
  return { network: policy.network_mode === 'public' ? 'bridge' : e.network.name, env, egress: carriesProxy ? e : undefined };
}

/** The agent's sandbox at seed: where it starts and what it carries; the seed then applies the baseline. */
export async function agentSandboxNetwork(deps: NetworkDeps, task: Task, agent: string | undefined): Promise<{ network: SandboxSpec['network']; env: Record<string, string>; phases: boolean }> {
  const how = agentSandboxNetworking(task, modelInSandbox(agent));
  const { network, env } = await startingNetwork(deps, phasePolicyFor(task, 0, 'baseline', false), how.switching, how.egress);
  return { network, env, phases: how.switching };
}

/**
 * A Compose task's group when its network switches by phase: its own networks internal, every service on its
 * baseline's way out from the start (the bridge, or the egress network with nothing admitted yet), and the proxy
 * settings in every service when some phase is an allowlist. Undefined for a group that keeps one network.
 */
export async function groupPhaseNetwork(deps: NetworkDeps, task: Task, agent: string | undefined): Promise<{
  phases: { attachFirst: string[]; sidecarEnv: Record<string, string> };
  mainEnv: Record<string, string>;
} | undefined> {
  const how = agentSandboxNetworking(task, modelInSandbox(agent));
  if (!how.switching) return undefined;
  const base = phasePolicyFor(task, 0, 'baseline', false).network_mode;
  const e = how.egress || base === 'allowlist' ? await deps.egress.get() : undefined;
  const env = how.egress && e ? proxyEnv(await e.proxy.start(), [e.network.gateway, ...(task.compose?.services ?? [])]) : {};
  const attachFirst = base === 'public' ? ['bridge'] : base === 'allowlist' && e ? [e.network.name] : [];
  return { phases: { attachFirst, sidecarEnv: env }, mainEnv: env };
}

/** The services a phase switch moves: a single sandbox, or every running service of a group. */
export interface PhaseTargets {
  handles: readonly SandboxHandle[];
  inGroup: boolean;
}

export const singleSandbox = (handle: SandboxHandle): PhaseTargets => ({ handles: [handle], inGroup: false });

/**
 * Puts the agent's sandbox on the network of `phase` of `turn` (a no-op for a task that never switches). `agent`: the
 * episode's agent (an installed one keeps its model gateway in every agent phase: phasePolicyFor).
 */
export async function enterPhase(deps: NetworkDeps, task: Task, targets: PhaseTargets, turn: number, phase: Phase, agent: string | undefined): Promise<void> {
  const inSandbox = modelInSandbox(agent);
  const how = agentSandboxNetworking(task, inSandbox);
  if (!how.switching) return;
  let opts: ApplyNetworkOptions = { inGroup: targets.inGroup };
  if (how.egress) {
    const e = await deps.egress.get();
    await e.proxy.start();
    opts = { ...opts, egress: { network: e.network, policies: e.policies } };
  }
  const want = toPhase(phasePolicyFor(task, turn, phase, inSandbox));
  await Promise.all(targets.handles.map((h) => deps.provider.network.applyPhase(h, want, opts)));
}

/**
 * Where the agent of `turn` reaches the model gateway: on the egress network's host address when its phase leaves it
 * there alone (an allowlist, or an installed agent's no-network phase), else undefined (the engine's bridge).
 */
export async function agentGatewayHost(deps: NetworkDeps, task: Task, turn: number, agent: string | undefined): Promise<string | undefined> {
  if (phasePolicyFor(task, turn, 'agent', modelInSandbox(agent)).network_mode !== 'allowlist') return undefined;
  return (await deps.egress.get()).network.gateway;
}

/** The network hooks verification calls for `turn` (src/verify/context.ts). */
export function verifyNetwork(deps: NetworkDeps, task: Task, targets: PhaseTargets, turn: number, agent: string | undefined): VerifyNetwork {
  return {
    agentPhase: (phase) => enterPhase(deps, task, targets, turn, phase === 'collect' ? 'baseline' : 'verifier', agent),
    separate: async (policy) => {
      const allowlist = policy.network_mode === 'allowlist';
      const start = await startingNetwork(deps, policy, allowlist, allowlist);
      return {
        network: start.network,
        env: start.env,
        started: async (verifier) => {
          if (start.egress) {
            await deps.provider.network.applyPhase(verifier, toPhase(policy), { egress: { network: start.egress.network, policies: start.egress.policies } });
          }
        },
      };
    },
  };
}
