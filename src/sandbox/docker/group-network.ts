// The network of one group (one per episode): created by Berth through the Engine API, with Berth's
// labels and, unless the engine's own pools are large enough, a subnet Berth allocates itself
// (docs/design.md section 7, Compose groups). Compose then uses it as an external network.
import type Docker from 'dockerode';
import { readFile } from 'node:fs/promises';
import { asSandboxError } from './loss.ts';
import { formatCidr, gatewayOf, enginePoolNetworks, parseCidr, parseProcRoutes, pickSubnet, poolCapacity, startIndexFor, type Cidr } from './subnets.ts';

/** Where episode subnets come from: Berth's own range, or the engine's default pools. */
export type SubnetSource = { kind: 'range'; pool: Cidr; size: number } | { kind: 'engine' } | { kind: 'auto'; pool: Cidr; size: number };

export const DEFAULT_SUBNET_POOL = '10.213.0.0/16';
export const DEFAULT_SUBNET_SIZE = 24;
/** An engine whose default pools hold at least this many networks allocates episode subnets itself. */
export const ENOUGH_ENGINE_NETWORKS = 256;
const CREATE_ATTEMPTS = 16;

/**
 * Allocations of one process run one at a time (listing and creating take ~100 ms), so this process's
 * groups never race each other for a block; another process's race is met by trying the next block.
 */
const allocating = new WeakMap<Docker, Promise<unknown>>();

function oneAtATime<T>(docker: Docker, work: () => Promise<T>): Promise<T> {
  const previous = allocating.get(docker) ?? Promise.resolve();
  const next = previous.catch(() => undefined).then(work);
  allocating.set(docker, next.catch(() => undefined));
  return next;
}

/** BERTH_SUBNET_POOL and BERTH_SUBNET_SIZE as the worker read them (src/config/env.ts); checked here. */
export interface SubnetSettings {
  /** A CIDR range (Berth allocates from it), `engine` (the engine's pools), or unset (auto: the engine's pools when they hold at least 256 networks, else 10.213.0.0/16). */
  pool?: string;
  /** The prefix length of each episode's subnet (default 24). */
  size?: string;
}

export function subnetSource(settings: SubnetSettings = {}): SubnetSource {
  const raw = settings.pool?.trim();
  const sizeText = settings.size?.trim();
  const size = sizeText ? Number(sizeText) : DEFAULT_SUBNET_SIZE;
  if (!Number.isInteger(size) || size < 8 || size > 29) {
    throw new Error(`BERTH_SUBNET_SIZE=${JSON.stringify(sizeText)}: expected a prefix length from 8 to 29, for example 24`);
  }
  if (raw === 'engine') return { kind: 'engine' };
  const pool = parseCidr(raw || DEFAULT_SUBNET_POOL);
  if (poolCapacity(pool, size) === 0) {
    throw new Error(`BERTH_SUBNET_POOL=${formatCidr(pool)} cannot hold a /${size} subnet: widen the range or raise BERTH_SUBNET_SIZE`);
  }
  return raw ? { kind: 'range', pool, size } : { kind: 'auto', pool, size };
}

export interface GroupNetwork {
  name: string;
  id: string;
  /** The subnet Berth chose, or null when the engine chose it. */
  subnet: string | null;
  adopted: boolean;
}

export interface GroupNetworkSpec {
  name: string;
  labels: Record<string, string>;
  /** No route out of the group (a no-network task): services still reach each other by name. */
  internal: boolean;
  source: SubnetSource;
}

const enginePoolsAnswer = new WeakMap<Docker, Promise<number>>();

async function enginePools(docker: Docker): Promise<number> {
  let answer = enginePoolsAnswer.get(docker);
  if (!answer) {
    answer = docker.info().then((i: { DefaultAddressPools?: { Base: string; Size: number }[] }) => enginePoolNetworks(i.DefaultAddressPools));
    enginePoolsAnswer.set(docker, answer);
    answer.catch(() => enginePoolsAnswer.delete(docker));
  }
  return answer;
}

async function usedSubnets(docker: Docker): Promise<Cidr[]> {
  const used: Cidr[] = [];
  for (const n of await docker.listNetworks()) {
    for (const c of n.IPAM?.Config ?? []) {
      try {
        if (c.Subnet) used.push(parseCidr(c.Subnet));
      } catch {
        // IPv6 subnets do not collide with IPv4 ones.
      }
    }
  }
  // A local engine's host routes (the host's own networks) are off limits too.
  if ((docker.modem as { socketPath?: string }).socketPath) {
    used.push(...parseProcRoutes(await readFile('/proc/net/route', 'utf8').catch(() => '')));
  }
  return used;
}

async function existing(docker: Docker, name: string): Promise<GroupNetwork | undefined> {
  try {
    const info = await docker.getNetwork(name).inspect();
    return { name, id: info.Id as string, subnet: (info.IPAM?.Config?.[0]?.Subnet as string | undefined) ?? null, adopted: true };
  } catch (err) {
    if ((err as { statusCode?: number }).statusCode === 404) return undefined;
    throw asSandboxError(name, err);
  }
}

function isOverlap(err: unknown): boolean {
  return /overlap|address already in use|conflicts with/i.test((err as Error).message ?? '');
}

function isDuplicateName(err: unknown): boolean {
  return (err as { statusCode?: number }).statusCode === 409 || /already exists/i.test((err as Error).message ?? '');
}

/** Create-or-adopt the named network; a subnet another allocator took meanwhile is skipped and the next one tried. */
export function ensureGroupNetwork(docker: Docker, spec: GroupNetworkSpec): Promise<GroupNetwork> {
  return oneAtATime(docker, () => createOrAdopt(docker, spec));
}

async function createOrAdopt(docker: Docker, spec: GroupNetworkSpec): Promise<GroupNetwork> {
  const found = await existing(docker, spec.name);
  if (found) return found;
  let source = spec.source;
  if (source.kind === 'auto') source = (await enginePools(docker)) >= ENOUGH_ENGINE_NETWORKS ? { kind: 'engine' } : { ...source, kind: 'range' };
  const base: Docker.NetworkCreateOptions = {
    Name: spec.name, CheckDuplicate: true, Driver: 'bridge', Internal: spec.internal, Labels: spec.labels,
  };
  const tried: Cidr[] = [];
  for (let attempt = 0; attempt < CREATE_ATTEMPTS; attempt++) {
    let subnet: Cidr | null = null;
    if (source.kind === 'range') {
      subnet = pickSubnet({
        pool: source.pool, size: source.size, used: [...(await usedSubnets(docker)), ...tried],
        start: startIndexFor(spec.name, poolCapacity(source.pool, source.size)),
      });
      if (!subnet) {
        throw new Error(
          `no free /${source.size} subnet left in ${formatCidr(source.pool)} for network ${spec.name}: ` +
          'set BERTH_SUBNET_POOL to a wider range (or BERTH_SUBNET_SIZE to a longer prefix), or remove finished episodes with `berth janitor`',
        );
      }
    }
    const options: Docker.NetworkCreateOptions = subnet
      ? { ...base, IPAM: { Driver: 'default', Config: [{ Subnet: formatCidr(subnet), Gateway: gatewayOf(subnet) }] } }
      : base;
    try {
      const net = await docker.createNetwork(options);
      return { name: spec.name, id: net.id, subnet: subnet ? formatCidr(subnet) : null, adopted: false };
    } catch (err) {
      if (isDuplicateName(err) && !isOverlap(err)) {
        const raced = await existing(docker, spec.name);
        if (raced) return raced;
      }
      if (subnet && isOverlap(err)) {
        tried.push(subnet);
        continue;
      }
      throw asSandboxError(spec.name, err);
    }
  }
  throw new Error(`could not create network ${spec.name}: ${CREATE_ATTEMPTS} subnets in a row were taken by other networks meanwhile`);
}

/** Removes the named network; one already gone is fine. */
export async function removeNetwork(docker: Docker, idOrName: string, abortSignal?: AbortSignal): Promise<boolean> {
  try {
    await docker.getNetwork(idOrName).remove(abortSignal ? { abortSignal } : {});
    return true;
  } catch (err) {
    if ((err as { statusCode?: number }).statusCode === 404) return false;
    throw asSandboxError(idOrName, err);
  }
}
