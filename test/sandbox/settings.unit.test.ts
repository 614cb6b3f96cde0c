// The sandbox's settings are process variables read in src/config/env.ts, their one home (issue 13), and reach the
// sandbox as provider options, which checks them: these pin the path from the variable to what the sandbox uses.
import { afterEach, describe, expect, it } from 'vitest';
import { composeSettings, finalStateRetentionDays, subnetSettings } from '../../src/config/env.ts';
import { composeBinary } from '../../src/sandbox/compose/cli.ts';
import { subnetSource } from '../../src/sandbox/docker/group-network.ts';
import { formatCidr } from '../../src/sandbox/docker/subnets.ts';
import { DockerSandboxProvider } from '../../src/sandbox/docker/provider.ts';

const VARS = ['BERTH_FINAL_STATE_RETENTION_DAYS', 'BERTH_SUBNET_POOL', 'BERTH_SUBNET_SIZE', 'BERTH_COMPOSE_CLI', 'DOCKER_CONFIG'];
const saved = Object.fromEntries(VARS.map((k) => [k, process.env[k]]));
afterEach(() => {
  for (const k of VARS) {
    if (saved[k] === undefined) delete process.env[k];
    else process.env[k] = saved[k];
  }
});

function withEnv(vars: Record<string, string>): void {
  for (const k of VARS) delete process.env[k];
  Object.assign(process.env, vars);
}

describe('BERTH_FINAL_STATE_RETENTION_DAYS', () => {
  it.each([
    [{}, 7],
    [{ BERTH_FINAL_STATE_RETENTION_DAYS: '3' }, 3],
    [{ BERTH_FINAL_STATE_RETENTION_DAYS: '0.5' }, 0.5],
    [{ BERTH_FINAL_STATE_RETENTION_DAYS: '0' }, 7],
    [{ BERTH_FINAL_STATE_RETENTION_DAYS: '' }, 7],
    [{ BERTH_FINAL_STATE_RETENTION_DAYS: 'soon' }, 7],
  ])('%j: kept final states live %d days', (vars, days) => {
    withEnv(vars);
    expect(new DockerSandboxProvider(undefined, { finalStateRetentionDays: finalStateRetentionDays() }).finalStates!.retentionDays).toBe(days);
  });
});

describe('BERTH_SUBNET_POOL and BERTH_SUBNET_SIZE', () => {
  it('reach the subnet source, and a bad one is refused with the variable and the fix', () => {
    withEnv({ BERTH_SUBNET_POOL: '10.60.0.0/16', BERTH_SUBNET_SIZE: '25' });
    const s = subnetSource(subnetSettings());
    expect(s.kind === 'range' && [formatCidr(s.pool), s.size]).toEqual(['10.60.0.0/16', 25]);
    withEnv({ BERTH_SUBNET_SIZE: '31' });
    expect(() => new DockerSandboxProvider(undefined, { subnets: subnetSettings() })).toThrow('BERTH_SUBNET_SIZE="31": expected a prefix length from 8 to 29');
  });
});

describe('BERTH_COMPOSE_CLI and DOCKER_CONFIG', () => {
  it('name the binary the sandbox runs, and a missing one is refused with the fix', () => {
    withEnv({ BERTH_COMPOSE_CLI: '/bin/true' });
    expect(composeBinary(composeSettings())).toBe('/bin/true');
    withEnv({ DOCKER_CONFIG: '/nonexistent-docker-config' });
    expect(() => composeBinary(composeSettings())).toThrow(/looked for \/nonexistent-docker-config\/cli-plugins\/docker-compose\).*set BERTH_COMPOSE_CLI/);
  });
});
