// Installed agents keep their model gateway in every agent phase (issue 22; docs/design.md section 7, Network): in a
// no-network or allowlist [agent] phase, claude-code, codex and mini-swe-agent still reach the worker's gateway (the
// episode scores, the model's calls are counted) and nothing else the phase forbids (test servers on this engine's
// bridge are not reached, directly or through the proxy). Harbor's anchor is `--allow-agent-host`, which adds the
// model's host to the agent phase's allowlist (Harbor 0.25); Berth serves its gateway on the
// egress network, where such a phase puts the sandbox, and admits nothing else there (docs/departures.md).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBatch } from '../../src/client/batch.ts';
import type { AgentName, ResultRow } from '../../src/workflows/types.ts';
import { startTestWorkers, type TestCluster } from '../helpers/temporal.ts';
import { writeDataset } from '../helpers/tasks.ts';
import { PROBE, startTestServers, type TestServers } from '../helpers/network.ts';
import { startFakeVendors, WRITE_HELLO, type FakeVendors } from './fake-vendors.ts';

const REAL_KEY = 'sk-berth-test-REAL-phases-5d2e8a';
const INSTALL_TIMEOUT = 900_000;

let cluster: TestCluster;
let fake: FakeVendors;
let servers: TestServers;
let dataset: string;

/** A hello task whose agent phase has `agentToml`; environment/probe.sh (uploaded to /app) records what the agent reaches. */
function task(id: string, agentToml: string, probes: string, want: string): Record<string, string> {
  return {
    [`${id}/task.toml`]: `[environment]\ndocker_image = "berth-base:bookworm"\nworkdir = "/app"\n[agent]\ntimeout_sec = 600\n${agentToml}[verifier]\ntimeout_sec = 60\n`,
    [`${id}/instruction.md`]: 'Write "Hello, world!" to hello.txt.\n',
    [`${id}/environment/probe.sh`]: `${PROBE}\n${probes}\n`,
    [`${id}/tests/test.sh`]: '#!/bin/bash\nok=1\n' +
      `[ "$(cat /app/hello.txt)" = "Hello, world!" ] || { echo "no greeting"; ok=0; }\n` +
      `[ "$(cat /app/probes.txt)" = "${want}" ] || { echo "probes: $(cat /app/probes.txt), wanted ${want}"; ok=0; }\n` +
      'cp /app/probes.txt /logs/verifier/\necho $ok > /logs/verifier/reward.txt\n',
  };
}

beforeAll(async () => {
  servers = await startTestServers(`h22c-phases-${randomBytes(3).toString('hex')}`);
  fake = await startFakeVendors(REAL_KEY);
  fake.command = `${WRITE_HELLO}; bash probe.sh > probes.txt`;
  Object.assign(process.env, {
    ANTHROPIC_API_KEY: REAL_KEY, ANTHROPIC_BASE_URL: fake.url, OPENAI_API_KEY: REAL_KEY, OPENAI_BASE_URL: `${fake.url}/v1`,
  });
  const { a, b, aIp } = servers;
  dataset = writeDataset({
    // No network for the agent: the proxy (its settings are in the sandbox) admits nothing, and there is no route out.
    ...task('offline', 'network_mode = "no-network"\n', `probe ${a} env; probe ${a} direct`, 'refused:403\nblocked'),
    // An allowlist: server a through the proxy, not b, and nothing directly.
    ...task('allowlist', `network_mode = "allowlist"\nallowed_hosts = ["${aIp}"]\n`, `probe ${a} env; probe ${b} env; probe ${a} direct`, 'reach\nrefused:403\nblocked'),
  });
  cluster = await startTestWorkers('installed-phases');
}, 120_000);
afterAll(async () => {
  await cluster?.stop();
  await fake?.close();
  await servers?.remove();
});

async function run(agent: AgentName, model: string): Promise<Record<string, ResultRow>> {
  const handle = await startBatch({
    dataset, agent, model, client: cluster.client, taskQueue: cluster.taskQueue, concurrency: 2,
    resultsDir: mkdtempSync(join(tmpdir(), 'berth-installed-phases-')),
  });
  try {
    return Object.fromEntries((await handle.wait()).rows.map((r) => [r.task_id, r]));
  } finally {
    await handle.close();
  }
}

describe.each([
  { agent: 'claude-code' as const, model: 'anthropic/claude-sonnet-4-5' },
  { agent: 'codex' as const, model: 'openai/gpt-5-codex' },
  { agent: 'mini-swe-agent' as const, model: 'openai/gpt-4.1-mini' },
])('$agent in a restricted agent phase', ({ agent, model }) => {
  it('reaches the gateway (scores 1, its calls counted) and nothing the phase forbids', async () => {
    const rows = await run(agent, model);
    for (const id of ['offline', 'allowlist']) {
      const row = rows[id]!;
      expect(row, `${id}: ${row.failure_reason ?? ''}`).toMatchObject({ reward: 1, failure_kind: null, mask_sample: false });
      expect(row.usage?.calls ?? 0).toBeGreaterThanOrEqual(2);
    }
  }, INSTALL_TIMEOUT);
});
