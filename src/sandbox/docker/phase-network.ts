// The network of one phase applied to a running container (docs/design.md section 7, Network). The switch is driven by
// the phase about to run and reads where the container stands from the engine, so it is idempotent and a restarted
// worker applies the right one.
import type Docker from 'dockerode';
import { asSandboxError } from './loss.ts';
import { EGRESS_NETWORK, type ApplyNetworkOptions, type EgressNetwork, type PhaseNetwork } from '../network-phase.ts';
import type { SandboxHandle } from '../types.ts';

const BRIDGE = 'bridge';
const LABEL_EGRESS = 'berth.egress';

function gatewayOf(info: Docker.NetworkInspectInfo): string {
  const gw = info.IPAM?.Config?.find((c) => c.Gateway)?.Gateway;
  if (!gw) throw new Error(`network ${info.Name} has no gateway address; remove it (docker network rm ${info.Name}) and Berth makes it again`);
  return gw;
}

/** The host's internal network for allowlist sandboxes: no route out, no traffic between its containers. Create-or-adopt. */
export async function ensureEgressNetwork(docker: Docker): Promise<EgressNetwork> {
  const inspect = async () => (await docker.getNetwork(EGRESS_NETWORK).inspect()) as Docker.NetworkInspectInfo;
  let info: Docker.NetworkInspectInfo;
  try {
    info = await inspect();
  } catch (err) {
    if ((err as { statusCode?: number }).statusCode !== 404) throw err;
    try {
      await docker.createNetwork({
        Name: EGRESS_NETWORK, CheckDuplicate: true, Internal: true, Driver: 'bridge',
        Options: { 'com.docker.network.bridge.enable_icc': 'false' }, Labels: { [LABEL_EGRESS]: '1' },
      });
    } catch (e) {
      if ((e as { statusCode?: number }).statusCode !== 409) throw e;
    }
    info = await inspect();
  }
  if (!info.Internal) throw new Error(`a network named ${EGRESS_NETWORK} exists but is not internal; remove it (docker network rm ${EGRESS_NETWORK}) and Berth makes it again`);
  return { id: info.Id, name: info.Name, gateway: gatewayOf(info) };
}

/** The networks a phase switch joins and leaves: the way out of a group, everything of a single sandbox. */
const switched = (name: string, inGroup: boolean): boolean => !inGroup || name === BRIDGE || name === EGRESS_NETWORK;

type Attached = Record<string, { IPAddress?: string } | undefined>;

async function attached(docker: Docker, handle: SandboxHandle): Promise<Attached> {
  try {
    return ((await docker.getContainer(handle.containerId).inspect()).NetworkSettings.Networks ?? {}) as Attached;
  } catch (err) {
    throw asSandboxError(handle.name, err);
  }
}

const ignorable = (err: unknown, ...texts: string[]): boolean => {
  const e = err as { statusCode?: number; message?: string; json?: { message?: string } };
  const msg = `${e.json?.message ?? ''} ${e.message ?? ''}`.toLowerCase();
  return texts.some((t) => msg.includes(t));
};

/**
 * Puts the sandbox on `want`'s networks, leaving it on no other. An allowlist sandbox (and a public phase of one
 * that also has allowlist phases, whose proxy settings stay in its environment) is on the egress network with its
 * phase's allowlist registered under its address there; the narrower rule is always in place before the wider one.
 * A group's service keeps its group networks (internal: the services still reach each other by name in every phase).
 */
export async function applyPhaseNetwork(docker: Docker, handle: SandboxHandle, want: PhaseNetwork, opts: ApplyNetworkOptions = {}): Promise<void> {
  const egress = opts.egress;
  if (want.mode === 'allowlist' && !egress) throw new Error('an allowlist phase needs the egress network');
  const wanted = new Set<string>();
  if (want.mode === 'public') wanted.add(BRIDGE);
  if (egress && want.mode !== 'no-network') wanted.add(egress.network.name);
  const policy = { container: handle.containerId, hosts: want.mode === 'allowlist' ? [...want.hosts] : null };

  const now = await attached(docker, handle);
  const register = (nets: Attached) => {
    const ip = egress ? nets[egress.network.name]?.IPAddress : undefined;
    if (egress && ip) egress.policies.set(ip, policy);
  };
  if (egress && wanted.has(egress.network.name)) register(now);
  for (const name of Object.keys(now)) {
    if (wanted.has(name) || !switched(name, opts.inGroup ?? false)) continue;
    const ip = now[name]?.IPAddress;
    if (egress && name === egress.network.name && ip) egress.policies.remove(ip);
    await docker.getNetwork(name).disconnect({ Container: handle.containerId, Force: true }).catch((err: unknown) => {
      if (!ignorable(err, 'is not connected')) throw asSandboxError(handle.name, err);
    });
  }
  let joined = false;
  for (const name of wanted) {
    if (name in now) continue;
    await docker.getNetwork(name).connect({ Container: handle.containerId }).catch((err: unknown) => {
      if (!ignorable(err, 'already exists in network', 'already attached')) throw asSandboxError(handle.name, err);
    });
    joined = true;
  }
  if (joined && egress && wanted.has(egress.network.name)) register(await attached(docker, handle));
}

/** Whether `container` is at `ip` on `network` now (the proxy's check before it trusts a policy file). */
export async function holdsAddress(docker: Docker, network: string, ip: string, container: string): Promise<boolean> {
  const nets = (await docker.getContainer(container).inspect()).NetworkSettings.Networks as Attached;
  return nets[network]?.IPAddress === ip;
}

/** Leaves the container on `network` alone ('none': on none), as if it had been created there. Idempotent. */
export async function putOnNetwork(docker: Docker, handle: SandboxHandle, network: string): Promise<void> {
  const now = await attached(docker, handle);
  for (const name of Object.keys(now)) {
    if (name === network) continue;
    await docker.getNetwork(name).disconnect({ Container: handle.containerId, Force: true }).catch((err: unknown) => {
      if (!ignorable(err, 'is not connected')) throw asSandboxError(handle.name, err);
    });
  }
  if (network === 'none' || network in now) return;
  await docker.getNetwork(network).connect({ Container: handle.containerId }).catch((err: unknown) => {
    if (!ignorable(err, 'already exists in network', 'already attached')) throw asSandboxError(handle.name, err);
  });
}
