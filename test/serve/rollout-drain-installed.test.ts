// A trainer's drain and an installed agent's time limit (issue 41, Policy versions and weight sync): claude-code in a
// rollout run (berth serve, a real worker, its layer on Docker), its calls held at the gateway by a drain far longer
// than its budget. The held time is not the agent's: after the resume it finishes and scores 1. Before the limit
// was kept from outside (src/agents/moving-deadline.ts), the `timeout` inside the sandbox ended the agent mid-drain.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import Docker from 'dockerode';
import { startTestWorkers, type TestCluster } from '../helpers/temporal.ts';
import { noContainersLeft } from '../helpers/docker.ts';
import { writeDataset } from '../helpers/tasks.ts';
import { FakePolicy } from '../helpers/fake-policy.ts';
import { ackGroups, postJson } from '../helpers/rollout-groups.ts';
import { waitUntil } from '../helpers/worker-process.ts';
import { startServe, type Serving } from '../../src/serve/server.ts';
import { parseTokenRecords } from '../../src/tokens/index.ts';
import { DockerSandboxProvider } from '../../src/sandbox/index.ts';
import { buildLayerFor } from '../../src/host/agent-layer.ts';

/** The agent's own budget; the drain lasts far longer (its start on a loaded machine may take a minute of it). */
const BUDGET_SEC = 60;
const HOLD_MS = 130_000;

const TOML = `[environment]\ndocker_image = "berth-base:bookworm"\nworkdir = "/app"\n[agent]\ntimeout_sec = ${BUDGET_SEC}\n[verifier]\ntimeout_sec = 60\n`;
const dataset = () => writeDataset({
  'drained/task.toml': TOML,
  'drained/instruction.md': 'Task drained: append one line to /app/runs.\n',
  'drained/tests/test.sh': '#!/bin/bash\n[ "$(wc -l < /app/runs)" = 1 ] && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt\n',
});

describe('a drain longer than an installed agent\'s budget (claude-code, berth serve, fake policy)', () => {
  let cluster: TestCluster;
  let serving: Serving;
  let engine: FakePolicy;
  const docker = new Docker();
  const agentCalls = () => engine.seen.filter((s) => JSON.stringify(s.body['messages']).includes('Task drained'));

  beforeAll(async () => {
    engine = await new FakePolicy({
      model: 'policy-1b',
      script: ({ messages, tools }) => {
        const names = tools.map((t) => String((t['function'] as Record<string, unknown>)['name']));
        if (!names.includes('Bash') || messages.some((m) => m['role'] === 'tool')) return { content: 'Done: one line appended.' };
        return { content: '', toolCalls: [{ name: 'Bash', arguments: { command: 'echo run >> /app/runs', description: 'append the line' } }] };
      },
    }).start();
    // The layer first, so the drain starts with the agent's first call (an install would take part of it).
    await buildLayerFor(new DockerSandboxProvider(), 'berth-base:bookworm', 'claude-code');
    cluster = await startTestWorkers('drain-installed');
    serving = await startServe({ client: cluster.client, taskQueue: cluster.taskQueue, port: 0, dataset: dataset(), agent: 'claude-code' });
  }, 900_000);
  afterAll(async () => {
    await serving?.close();
    await cluster?.stop();
    await engine?.stop();
  });

  it('holds its calls, does not count the held time against the agent, and scores 1 after the resume', async () => {
    const key = `drainc-${randomBytes(4).toString('hex')}`;
    expect((await postJson(`${serving.url}/runs`, {
      key, tasks: ['drained'], n: 1, concurrency: 1, agent: 'claude-code',
      policy: { endpoint: `${engine.url}/v1`, model: 'policy-1b', version: 0 },
    })).status).toBe(201);
    expect((await postJson(`${serving.url}/runs/${key}/drain`, {})).body).toMatchObject({ draining: true });
    const label = `berth.batch=rollout-${key}`;
    await waitUntil(async () => (await docker.listContainers({ filters: { label: [label] } })).length > 0, 300_000, 'the sample\'s sandbox');
    await new Promise((r) => setTimeout(r, HOLD_MS));
    // What reached the engine during the drain: the policy probe berth serve makes before the run, no agent call.
    expect(agentCalls()).toHaveLength(0);

    expect((await postJson(`${serving.url}/runs/${key}/resume`, {})).body).toMatchObject({ draining: false });
    const { acked: [group] } = await ackGroups(serving.url, key, 1, 300_000);
    const row = group!.rows[0]!;
    expect(row, JSON.stringify(row).slice(0, 2000)).toMatchObject({ valid: true, reward: 1, attempt: 1 });
    const records = parseTokenRecords(readFileSync(row.tokens!, 'utf8'));
    expect(records.length).toBeGreaterThanOrEqual(2);
    // The first call waited at the gateway longer than the agent's whole budget, and the agent still went on.
    expect(Math.max(...records.map((r) => r.timing.held_ms))).toBeGreaterThan(BUDGET_SEC * 1000);
    expect(new Set(records.map((r) => r.dialect))).toEqual(new Set(['anthropic-messages']));
    expect(agentCalls().length).toBeGreaterThanOrEqual(2);
    await noContainersLeft(label, 60_000);
  }, 900_000);
});
