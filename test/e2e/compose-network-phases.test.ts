// The network per phase of a Compose task, seen from main and from a sidecar (issue 14, "every service of a group";
// docs/design.md section 7, Network; docs/departures.md): the group's own network stays up in every phase, so main
// reaches its sidecar by name throughout, while every service's way out (the engine's bridge, or the egress proxy
// of an allowlist) is joined and left phase by phase.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import type { ResultRow } from '../../src/workflows/types.ts';
import { noContainersLeft } from '../helpers/docker.ts';
import { rowsByTask, startTestWorkers, type TestCluster } from '../helpers/temporal.ts';
import { PROBE, PROBING_SIDECAR_COMPOSE as COMPOSE, SIDE, startTestServers, type TestServers } from '../helpers/network.ts';

interface StepSpec { name: string; toml?: string; agent: string; verify: string }

const HEAD = `${PROBE}\n${SIDE}\nok=1\nfail() { echo "FAILED: $*"; ok=0; }\nis() { [ "$(cat $1)" = "$2" ] || fail "$1: $(cat $1), wanted $2"; }\n`;

const task = (id: string, top: string, steps: StepSpec[], compose = COMPOSE): Record<string, string> => ({
  [`${id}/task.toml`]: `[environment]\ndocker_image = "berth-base:bookworm"\nworkdir = "/app"\n${top}` +
    steps.map((s) => `[[steps]]\nname = "${s.name}"\n${s.toml ?? ''}`).join(''),
  [`${id}/environment/docker-compose.yaml`]: compose,
  ...Object.fromEntries(steps.flatMap((s) => [
    [`${id}/steps/${s.name}/instruction.md`, `${s.name}\n`],
    [`${id}/steps/${s.name}/solution/solve.sh`, `#!/bin/bash\n${HEAD}\nmkdir -p /app\n${s.agent}\n`],
    [`${id}/steps/${s.name}/tests/test.sh`, `#!/bin/bash\n${HEAD}\n${s.verify}\necho $ok > /logs/verifier/reward.txt\n`],
  ])),
});

/** The probing sidecar's file with main and the sidecar on a named network of the task's own (issue 22: main.networks runs). */
const NAMED_NETWORK_COMPOSE = `${COMPOSE.replace('  main:\n', '  main:\n    networks: [backend]\n').replace('  side:\n    image:', '  side:\n    networks: [backend]\n    image:')}networks:\n  backend: {}\n`;

/** `expect CMD... = WANT` in a test.sh: what the verifier phase sees now. */
const sees = (cmd: string, want: string) => `got=$(${cmd}); [ "$got" = "${want}" ] || fail "${cmd}: $got, wanted ${want}"`;

describe('network per phase of a Compose group (every service switched)', () => {
  let cluster: TestCluster;
  let servers: TestServers;
  let rows = new Map<string, ResultRow>();
  beforeAll(async () => {
    servers = await startTestServers(`t14-cnet-${randomBytes(3).toString('hex')}`);
    const { a, b } = servers;
    const files = {
      ...task('mixed', '', [
        {
          name: 'offline-agent', toml: '[steps.agent]\nnetwork_mode = "no-network"\n',
          agent: `probe ${a} direct > /app/a1\nprobe http://side:8080/ direct > /app/s1\nside ${a} direct > /app/sa1`,
          verify: `is /app/a1 blocked\nis /app/s1 reach\nis /app/sa1 blocked\n${sees(`probe ${a} direct`, 'reach')}\n${sees(`side ${a} direct`, 'reach')}`,
        },
        {
          name: 'offline-verifier', toml: '[steps.verifier]\nnetwork_mode = "no-network"\n',
          agent: `probe ${a} direct > /app/a2\nside ${a} direct > /app/sa2`,
          verify: `is /app/a2 reach\nis /app/sa2 reach\n${sees(`probe ${a} direct`, 'blocked')}\n${sees('probe http://side:8080/ direct', 'reach')}\n${sees(`side ${a} direct`, 'blocked')}`,
        },
      ]),
      // main and its sidecar on the task's named network (issue 22, Compose refusals narrowed: `main.networks` runs,
      // with per-phase switching still right): cut off from outside for the agent, seeing each other by name there,
      // and online again for the verifier.
      ...task('named-network', '', [
        {
          name: 'offline-agent', toml: '[steps.agent]\nnetwork_mode = "no-network"\n',
          agent: `probe ${a} direct > /app/a1\nprobe http://side:8080/ direct > /app/s1\nside ${a} direct > /app/sa1`,
          verify: `is /app/a1 blocked\nis /app/s1 reach\nis /app/sa1 blocked\n${sees(`probe ${a} direct`, 'reach')}\n${sees(`side ${a} direct`, 'reach')}\n${sees('probe http://side:8080/ direct', 'reach')}`,
        },
      ], NAMED_NETWORK_COMPOSE),
      // The reverse baseline: an offline group whose agent phase goes online (its services start cut off).
      ...task('offline-env', 'network_mode = "no-network"\n[agent]\nnetwork_mode = "public"\n', [
        {
          name: 'only',
          agent: `probe ${a} direct > /app/a\nside ${a} direct > /app/sa`,
          verify: `is /app/a reach\nis /app/sa reach\n${sees(`probe ${a} direct`, 'blocked')}\n${sees(`side ${a} direct`, 'blocked')}\n${sees('probe http://side:8080/ direct', 'reach')}`,
        },
      ]),
      // An allowlist for the agent phase of every service, through the egress proxy each one carries; main still
      // reaches its sidecar by name (NO_PROXY); the public verifier phase reaches everything again.
      ...task('allowlist', `[agent]\nnetwork_mode = "allowlist"\nallowed_hosts = ["${servers.aIp}"]\n[verifier]\nnetwork_mode = "public"\n`, [
        {
          name: 'only',
          agent: `{ probe ${a} env; probe ${b} env; probe ${a} direct; probe http://side:8080/ env; side ${a} env; side ${b} env; side ${a} direct; } > /app/agent`,
          verify: `is /app/agent "$(printf 'reach\\nrefused:403\\nblocked\\nreach\\nreach\\nrefused:403\\nblocked')"\n${sees(`probe ${b} direct`, 'reach')}\n${sees(`side ${b} direct`, 'reach')}`,
        },
      ]),
    };
    cluster = await startTestWorkers('compose-network-phases');
    rows = await rowsByTask(cluster, files, 'berth-cnet-');
  }, 600_000);
  afterAll(async () => {
    await cluster?.stop();
    await servers?.remove();
  });

  it('no-network agent phase: main and its sidecar are cut off from outside but see each other; the public verifier reaches out, and the reverse', () => {
    const row = rows.get('mixed')!;
    expect(row.failure_reason).toBeNull();
    expect(row.turns.map((t) => [t.step, t.reward])).toEqual([['offline-agent', 1], ['offline-verifier', 1]]);
  });

  it('main on the task\'s named network: the same switch, the sidecar reached by name in both phases', () => {
    const row = rows.get('named-network')!;
    expect(row.failure_reason).toBeNull();
    expect(row.turns.map((t) => [t.step, t.reward])).toEqual([['offline-agent', 1]]);
  });

  it('a no-network group whose agent phase is public: every service online for the agent, offline again for the verifier', () => {
    expect(rows.get('offline-env')).toMatchObject({ reward: 1, failure_reason: null });
  });

  it('an allowlist phase holds for every service of the group, through the proxy only, with the sidecar reached directly', () => {
    expect(rows.get('allowlist')).toMatchObject({ reward: 1, failure_reason: null });
  });

  it('the groups are gone', async () => {
    for (const row of rows.values()) await noContainersLeft(`berth.workflow=${row.workflow_id}`);
  });
});
