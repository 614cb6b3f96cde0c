// The network per phase, for the activities (DESIGN.md section 7, Network): each activity puts the sandbox on the
// network of the phase it is about to run (the step's setup and collect hooks: the environment's baseline; the agent:
// the agent phase's; a shared test.sh: the verifier phase's), reading nothing from earlier attempts, so a worker
// restarted between phases applies the right one. Tasks whose phases all share one policy never switch.
import { join } from 'node:path';
import {
  EgressPolicies, EgressProxy,
  type EgressNetwork, type PhaseNetwork, type DockerSandboxProvider, type SandboxHandle, type SandboxSpec,
} from '../sandbox/index.ts';
import { homePath } from '../config/paths.ts';
import { agentSandboxNetworking, phasePolicy, type NetworkPolicy, type Phase, type Task } from '../task/index.ts';
import type { VerifyNetwork } from '../verify/index.ts';
import { OnDemand } from './on-demand.ts';

export interface Egress {
  network: EgressNetwork;
  policies: EgressPolicies;
  proxy: EgressProxy;
}

/** What switching a sandbox's network needs: its engine, and that engine's egress, made on first use. */
export interface NetworkDeps {
  provider: DockerSandboxProvider;
  egress: OnDemand<Egress>;
}

/** A worker's view of its engine's egress network and proxy (the proxy is served once per host, see egress-proxy.ts). */
export function workerEgress(provider: DockerSandboxProvider): OnDemand<Egress> {
  return new OnDemand(async () => {
    const network = await provider.ensureEgressNetwork();
    const dir = homePath('egress', network.id.slice(0, 12));
    const policies = new EgressPolicies(join(dir, 'policies'));
    const proxy = new EgressProxy({ host: network.gateway, portFile: join(dir, 'port'), policies, owns: (ip, c) => provider.holdsAddress(network.name, ip, c) });
    return { network, policies, proxy };
  });
}

/** What a sandbox with allowlist phases carries in its environment: the proxy for HTTP(S), nothing for loopback. */
export function proxyEnv(url: string): Record<string, string> {
  const none = 'localhost,127.0.0.1,::1';
  return { HTTP_PROXY: url, HTTPS_PROXY: url, http_proxy: url, https_proxy: url, NO_PROXY: none, no_proxy: none };
}

const toPhase = (p: NetworkPolicy): PhaseNetwork => ({ mode: p.network_mode, hosts: p.allowed_hosts });

/** A fresh sandbox's create-time network for `policy`, its proxy settings, and its egress when it needs one. */
async function startingNetwork(deps: NetworkDeps, policy: NetworkPolicy, needsEgressNetwork: boolean, carriesProxy: boolean) {
  if (!needsEgressNetwork && !carriesProxy) return { network: policy.network_mode === 'no-network' ? 'none' : 'bridge', env: {}, egress: undefined };
  const e = await deps.egress.get();
  const env = carriesProxy ? proxyEnv(await e.proxy.start()) : {};
  // Until its phase is applied, a sandbox that may switch starts on the egress network with no allowlist: no way out.
  return { network: policy.network_mode === 'public' ? 'bridge' : e.network.name, env, egress: carriesProxy ? e : undefined };
}

/** The agent's sandbox at seed: where it starts and what it carries; the seed then applies the baseline. */
export async function agentSandboxNetwork(deps: NetworkDeps, task: Task): Promise<{ network: SandboxSpec['network']; env: Record<string, string> }> {
  const how = agentSandboxNetworking(task);
  const { network, env } = await startingNetwork(deps, phasePolicy(task, 0, 'baseline'), how.switching, how.egress);
  return { network, env };
}

/** Puts the agent's sandbox on the network of `phase` of `turn` (a no-op for a task that never switches). */
export async function enterPhase(deps: NetworkDeps, task: Task, handle: SandboxHandle, turn: number, phase: Phase): Promise<void> {
  const how = agentSandboxNetworking(task);
  if (!how.switching) return;
  let opts = {};
  if (how.egress) {
    const e = await deps.egress.get();
    await e.proxy.start();
    opts = { egress: { network: e.network, policies: e.policies } };
  }
  await deps.provider.applyPhaseNetwork(handle, toPhase(phasePolicy(task, turn, phase)), opts);
}

/** The network hooks verification calls for `turn` (src/verify/context.ts). */
export function verifyNetwork(deps: NetworkDeps, task: Task, handle: SandboxHandle, turn: number): VerifyNetwork {
  return {
    agentPhase: (phase) => enterPhase(deps, task, handle, turn, phase === 'collect' ? 'baseline' : 'verifier'),
    separate: async (policy) => {
      const allowlist = policy.network_mode === 'allowlist';
      const start = await startingNetwork(deps, policy, allowlist, allowlist);
      return {
        network: start.network,
        env: start.env,
        started: async (verifier) => {
          if (start.egress) {
            await deps.provider.applyPhaseNetwork(verifier, toPhase(policy), { egress: { network: start.egress.network, policies: start.egress.policies } });
          }
        },
      };
    },
  };
}
