// The network per phase, seen from inside the sandbox (docs/design.md section 7, Network; Harbor's phase policies,
// Harbor 0.25): test servers on this engine, an agent phase cut off while its verifier
// reaches them and the reverse, and an allowlist that admits one server through the egress proxy and refuses another.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Docker from 'dockerode';
import { randomBytes } from 'node:crypto';
import type { ResultRow } from '../../src/workflows/types.ts';
import { noContainersLeft } from '../helpers/docker.ts';
import { rowsByTask, startTestWorkers, type TestCluster } from '../helpers/temporal.ts';
import { PROBE, startTestServers, type TestServers } from '../helpers/network.ts';

interface StepSpec { name: string; toml?: string; agent: string; verify: string }

/** A multi-step task whose solve.sh records probes and whose test.sh rewards 1 when every expectation holds. */
const task = (id: string, environment: string, top: string, steps: StepSpec[]): Record<string, string> => ({
  [`${id}/task.toml`]: `[environment]\ndocker_image = "berth-base:bookworm"\nworkdir = "/app"\n${environment}${top}` +
    steps.map((s) => `[[steps]]\nname = "${s.name}"\n${s.toml ?? ''}`).join(''),
  [`${id}/tests/probe.sh`]: PROBE,
  ...Object.fromEntries(steps.flatMap((s) => [
    [`${id}/steps/${s.name}/instruction.md`, `${s.name}\n`],
    [`${id}/steps/${s.name}/solution/solve.sh`, `#!/bin/bash\n${PROBE}\n${s.agent}\n`],
    [`${id}/steps/${s.name}/tests/test.sh`, `#!/bin/bash\nsource /tests/probe.sh\nok=1\nfail() { echo "FAILED: $*"; ok=0; }\n${s.verify}\necho $ok > /logs/verifier/reward.txt\n`],
  ])),
});

describe('network per phase from inside the sandbox', () => {
  let cluster: TestCluster;
  let servers: TestServers;
  let rows = new Map<string, ResultRow>();
  beforeAll(async () => {
    servers = await startTestServers(`t14-net-${randomBytes(3).toString('hex')}`);
    const { a, b } = servers;
    const expectLine = (file: string, want: string) => `[ "$(cat ${file})" = "${want}" ] || fail "${file}: $(cat ${file}), wanted ${want}"`;
    const check = (url: string, mode: string, want: string) => `got=$(probe ${url} ${mode}); [ "$got" = "${want}" ] || fail "${url} ${mode}: $got, wanted ${want}"`;
    const files = {
      // Harbor's steps-mixed shape, against a server on this engine instead of example.com.
      ...task('mixed', '', '', [
        { name: 'offline-agent', toml: '[steps.agent]\nnetwork_mode = "no-network"\n',
          agent: `probe ${a} direct > /app/agent1`, verify: `${expectLine('/app/agent1', 'blocked')}\n${check(a, 'direct', 'reach')}` },
        { name: 'offline-verifier', toml: '[steps.verifier]\nnetwork_mode = "no-network"\n',
          agent: `probe ${a} direct > /app/agent2`, verify: `${expectLine('/app/agent2', 'reach')}\n${check(a, 'direct', 'blocked')}` },
      ]),
      // The reverse baseline: an offline environment whose agent phase goes online (the sandbox starts cut off).
      ...task('offline-env', 'network_mode = "no-network"\n', '[agent]\nnetwork_mode = "public"\n', [
        { name: 'only', agent: `probe ${a} direct > /app/agent`, verify: `${expectLine('/app/agent', 'reach')}\n${check(a, 'direct', 'blocked')}` },
      ]),
      // An allowlist admits server a through the proxy, refuses b, and has no direct route; a public verifier
      // phase of the same sandbox reaches b, directly and through the proxy settings it still carries.
      ...task('allowlist', '', `[agent]\nnetwork_mode = "allowlist"\nallowed_hosts = ["${servers.aIp}"]\n[verifier]\nnetwork_mode = "public"\n`, [
        { name: 'only', agent: `{ probe ${a} env; probe ${b} env; probe ${a} direct; } > /app/agent`,
          verify: `${expectLine('/app/agent', 'reach\nrefused:403\nblocked')}\n${check(b, 'env', 'reach')}\n${check(b, 'direct', 'reach')}` },
      ]),
      // A single-step task switches too: [agent] offline under a public environment, its verifier online.
      'single/task.toml': '[environment]\ndocker_image = "berth-base:bookworm"\nworkdir = "/app"\n[agent]\nnetwork_mode = "no-network"\n',
      'single/instruction.md': 'probe\n',
      'single/tests/probe.sh': PROBE,
      'single/solution/solve.sh': `#!/bin/bash\n${PROBE}\nprobe ${a} direct > /app/agent\n`,
      'single/tests/test.sh': `#!/bin/bash\nsource /tests/probe.sh\nok=1\nfail() { echo "FAILED: $*"; ok=0; }\n${expectLine('/app/agent', 'blocked')}\n${check(a, 'direct', 'reach')}\necho $ok > /logs/verifier/reward.txt\n`,
      // Overlay RUN lines are build steps: Harbor runs them in `docker build`, which has the build's network whatever
      // the task's network_mode; the no-network policy applies to the container after them (agent and verifier).
      'overlay-online/task.toml': '[environment]\nworkdir = "/app"\nnetwork_mode = "no-network"\n',
      'overlay-online/environment/Dockerfile': `FROM berth-base:bookworm\nRUN python3 -c "import urllib.request; urllib.request.urlopen('${a}', timeout=10).read(); open('/overlay-probe', 'w').write('reach')"\n`,
      'overlay-online/instruction.md': 'probe\n',
      'overlay-online/tests/probe.sh': PROBE,
      'overlay-online/solution/solve.sh': `#!/bin/bash\n${PROBE}\nprobe ${a} direct > /app/agent\n`,
      'overlay-online/tests/test.sh': `#!/bin/bash\nsource /tests/probe.sh\nok=1\nfail() { echo "FAILED: $*"; ok=0; }\n${expectLine('/overlay-probe', 'reach')}\n${expectLine('/app/agent', 'blocked')}\n${check(a, 'direct', 'blocked')}\necho $ok > /logs/verifier/reward.txt\n`,
    };
    cluster = await startTestWorkers('network-phases');
    rows = await rowsByTask(cluster, files, 'berth-net-');
  }, 600_000);
  afterAll(async () => {
    await cluster?.stop();
    await servers?.remove();
  });

  it('an agent phase marked no-network cannot reach the server while its public verifier can, and the reverse', () => {
    const row = rows.get('mixed')!;
    expect(row.failure_reason).toBeNull();
    expect(row.turns.map((t) => [t.step, t.reward])).toEqual([['offline-agent', 1], ['offline-verifier', 1]]);
  });

  it('a no-network environment whose agent phase is public: online for the agent, offline again for the verifier', () => {
    expect(rows.get('offline-env')).toMatchObject({ reward: 1, failure_reason: null });
  });

  it('a single-step task: its [agent] phase offline under a public environment, its verifier online', () => {
    expect(rows.get('single')).toMatchObject({ reward: 1, failure_reason: null });
  });

  it('an allowlist admits the listed server through the egress proxy, refuses another, and has no other route out', () => {
    expect(rows.get('allowlist')).toMatchObject({ reward: 1, failure_reason: null });
  });

  it('a no-network task\'s overlay RUN line reaches the server (a build step), its agent and verifier cannot', () => {
    const row = rows.get('overlay-online')!;
    expect(row, row.failure_reason ?? '').toMatchObject({ reward: 1, failure_reason: null });
  });

  it('the sandboxes are gone; the engine kept them off the test servers\' own network', async () => {
    for (const row of rows.values()) await noContainersLeft(`berth.workflow=${row.workflow_id}`);
    const net = await new Docker().getNetwork(servers.network).inspect();
    expect(Object.keys(net.Containers ?? {})).toHaveLength(2);
  });
});
