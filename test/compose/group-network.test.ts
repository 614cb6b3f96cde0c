// Episode networks on the real engine: docs/design.md section 7 (Compose groups: a subnet Berth can always
// allocate, never the engine's default pools running out).
import Docker from 'dockerode';
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { ensureGroupNetwork, removeNetwork, type SubnetSource } from '../../src/sandbox/docker/group-network.ts';
import { formatCidr, overlaps, parseCidr } from '../../src/sandbox/docker/subnets.ts';

const docker = new Docker();
const run = randomBytes(3).toString('hex');
const LABEL = `berth.test-network=${run}`;
/** Ranges only this file allocates from. */
const POOL = '10.252.0.0/18';
const SMALL_POOL = '10.252.64.0/22';
const range = (pool: string, size = 24): SubnetSource => ({ kind: 'range', pool: parseCidr(pool), size });

afterAll(async () => {
  for (const n of await docker.listNetworks({ filters: { label: [LABEL] } })) await removeNetwork(docker, n.Id);
});

const spec = (name: string, source: SubnetSource) => ({ name: `berth-test-net-${run}-${name}`, labels: { 'berth.test-network': run }, internal: false, source });

describe('ensureGroupNetwork', () => {
  it('gives 48 networks created at once 48 distinct subnets from the range', async () => {
    const nets = await Promise.all(Array.from({ length: 48 }, (_, i) => ensureGroupNetwork(docker, spec(`many-${i}`, range(POOL)))));
    const subnets = nets.map((n) => n.subnet!);
    expect(new Set(subnets).size).toBe(48);
    for (const s of subnets) expect(overlaps(parseCidr(s), parseCidr(POOL))).toBe(true);
    // The engine agrees: each network really has the subnet reported.
    const info = await docker.getNetwork(nets[0]!.id).inspect();
    expect(info.IPAM?.Config?.[0]?.Subnet).toBe(subnets[0]);
    expect(info.Labels).toMatchObject({ 'berth.test-network': run });
  });

  it('adopts a network that already has the name', async () => {
    const first = await ensureGroupNetwork(docker, spec('adopt', range(POOL)));
    const again = await ensureGroupNetwork(docker, spec('adopt', range(POOL)));
    expect(first.adopted).toBe(false);
    expect(again).toMatchObject({ id: first.id, subnet: first.subnet, adopted: true });
  });

  it('skips subnets other networks hold, and says what to do when the range is full', async () => {
    // Another network (not Berth's) sits in the small range's first block.
    const squatter = await docker.createNetwork({
      Name: `berth-test-net-${run}-squatter`, CheckDuplicate: true, Labels: { 'berth.test-network': run },
      IPAM: { Driver: 'default', Config: [{ Subnet: '10.252.64.0/24' }] },
    });
    expect(squatter.id).toBeTruthy();
    const got = await Promise.all([0, 1, 2].map((i) => ensureGroupNetwork(docker, spec(`small-${i}`, range(SMALL_POOL)))));
    expect(got.map((n) => n.subnet).sort()).toEqual(['10.252.65.0/24', '10.252.66.0/24', '10.252.67.0/24']);
    const err = await ensureGroupNetwork(docker, spec('small-full', range(SMALL_POOL))).catch((e: Error) => e);
    expect((err as Error).message).toContain(`no free /24 subnet left in ${formatCidr(parseCidr(SMALL_POOL))}`);
    expect((err as Error).message).toContain('set BERTH_SUBNET_POOL to a wider range');
  });

  it('makes an internal network for a group with no route out', async () => {
    const n = await ensureGroupNetwork(docker, { ...spec('internal', range(POOL)), internal: true });
    expect((await docker.getNetwork(n.id).inspect()).Internal).toBe(true);
  });

  it('leaves the subnet to the engine when told to', async () => {
    const n = await ensureGroupNetwork(docker, spec('engine', { kind: 'engine' }));
    expect(n.subnet).toBeNull();
    expect((await docker.getNetwork(n.id).inspect()).IPAM?.Config?.length).toBeGreaterThan(0);
  });
});
