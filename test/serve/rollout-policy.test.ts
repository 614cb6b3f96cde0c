// A trainer's policy controls through a real run (issue 41, Policy versions and weight sync): berth serve, a real
// worker, the openai agent on Docker, its calls through the gateway to a fake vLLM. Asserted through the rollout API
// and what a trainer reads from a group (rows, their token records), not through internals.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { startTestWorkers, type TestCluster } from '../helpers/temporal.ts';
import { noContainersLeft } from '../helpers/docker.ts';
import { BASE_TOML, writeDataset } from '../helpers/tasks.ts';
import { FakePolicy, type SeenRequest } from '../helpers/fake-policy.ts';
import { ackGroups, postJson } from '../helpers/rollout-groups.ts';
import { waitUntil } from '../helpers/worker-process.ts';
import { startServe, type Serving } from '../../src/serve/server.ts';
import { parseTokenRecords } from '../../src/tokens/index.ts';
import type { RunStatus } from '../../src/rollouts/types.ts';

/** How long each task's one command runs: the window in which the test changes the policy. */
const COMMAND_SEC: Record<string, number> = { stale: 6, drain: 3 };

/**
 * Tasks whose test rewards 1 when the agent's command ran exactly once. The stale task's agent budget outlasts the
 * test; the drain task keeps the default 60 s, shorter than the drain, which must not count against it.
 */
const dataset = () => writeDataset(Object.fromEntries(Object.keys(COMMAND_SEC).flatMap((id) => [
  [`${id}/task.toml`, id === 'drain' ? BASE_TOML : BASE_TOML.replace('[agent]\ntimeout_sec = 60', '[agent]\ntimeout_sec = 600')], [`${id}/instruction.md`, `Task ${id}: run the command once.\n`],
  [`${id}/tests/test.sh`, '#!/bin/bash\n[ "$(wc -l < /app/runs)" = 1 ] && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt\n'],
])));

/** How long the drain lasts: past the openai agent's model-call heartbeat timeout (src/workflows/openai-turn.ts). */
const HOLD_MS = 130_000;

const taskOf = (s: SeenRequest): string => /Task (\w+):/.exec(JSON.stringify(s.body['messages']))?.[1] ?? '?';

describe('max_staleness and drain through a rollout run (berth serve, real worker, fake policy)', () => {
  let cluster: TestCluster;
  let serving: Serving;
  let engine: FakePolicy;
  /** The run's status; a query that failed under load (an HTTP error from berth serve) is asked again, twice. */
  const status = async (key: string): Promise<RunStatus> => {
    for (let i = 0; ; i++) {
      const r = await fetch(`${serving.url}/runs/${key}`);
      const body = await r.text();
      if (r.ok) return JSON.parse(body) as RunStatus;
      if (i === 2) throw new Error(`GET /runs/${key}: HTTP ${r.status}: ${body}`);
      console.log(`GET /runs/${key}: HTTP ${r.status}: ${body.slice(0, 300)} (asking again)`);
      await new Promise((res) => setTimeout(res, 2000));
    }
  };
  const seenFor = (task: string) => engine.seen.filter((s) => taskOf(s) === task);
  const startRun = async (key: string, task: string, extra: Record<string, unknown> = {}) => {
    const r = await postJson(`${serving.url}/runs`, {
      key, tasks: [task], n: 2, concurrency: 4, agent: 'openai', agent_args: { base_url: `${engine.url}/v1`, model: 'policy-1b' },
      policy: { endpoint: `${engine.url}/v1`, model: 'policy-1b', version: 0 }, ...extra,
    });
    expect(r.status).toBe(201);
  };

  beforeAll(async () => {
    engine = await new FakePolicy({
      model: 'policy-1b',
      script: ({ messages }) => {
        if (messages.at(-1)?.['role'] === 'tool') return { content: 'ran it' };
        const task = /Task (\w+):/.exec(JSON.stringify(messages))?.[1] ?? '';
        return { content: 'Running it.', toolCalls: [{ name: 'bash', arguments: { command: `echo run >> /app/runs; sleep ${COMMAND_SEC[task] ?? 1}` } }] };
      },
    }).start();
    cluster = await startTestWorkers('rollpolicy');
    serving = await startServe({ client: cluster.client, taskQueue: cluster.taskQueue, port: 0, dataset: dataset(), agent: 'openai' });
  });
  afterAll(async () => {
    await serving?.close();
    await cluster?.stop();
    await engine?.stop();
  });

  it('a sample whose first call is older than current - max_staleness is dropped and replaced: the group still has n rows, served and stamped under the new version', async () => {
    const key = `stale-${randomBytes(4).toString('hex')}`;
    await startRun(key, 'stale', { max_staleness: 1 });
    // Both samples made their first call under version 0; their commands run while the trainer moves to version 2.
    await waitUntil(() => seenFor('stale').length >= 2, 240_000, 'both samples\' first calls');
    engine.version = 'w2';
    expect((await postJson(`${serving.url}/runs/${key}/policy`, { version: 2 })).body).toMatchObject({ version: 2 });

    const { acked: [group] } = await ackGroups(serving.url, key, 1, 240_000);
    expect(group!.rows).toHaveLength(2);
    expect(group!.masked).toBe(false);
    for (const row of group!.rows) {
      // The original attempt was stale (first call at 0 < 2 - 1); its replacement is attempt 2, all of it at version 2.
      expect(row).toMatchObject({ valid: true, reward: 1, attempt: 2, policy_version: 2 });
      expect(row.training).toMatchObject({ calls: 2, first_version: 2, last_version: 2, exact: true });
      expect(parseTokenRecords(readFileSync(row.tokens!, 'utf8')).map((r) => r.policy_version)).toEqual([2, 2]);
    }
    expect((await status(key)).counters).toMatchObject({ stale: 2, scored: 2, masked: 0 });
    // The engine: the stale attempts' first calls under v0, their second calls and the replacements' 2 x 2 under w2.
    expect(seenFor('stale').map((c) => c.version)).toEqual(['v0', 'v0', 'w2', 'w2', 'w2', 'w2', 'w2', 'w2']);
    await noContainersLeft(`berth.batch=rollout-${key}`, 60_000);
  }, 420_000);

  it('drain holds new model calls at the gateway (the agents wait, none fails, the engine sees nothing, the held time is not the agent\'s) until resume; then every row is scored', async () => {
    const key = `drain-${randomBytes(4).toString('hex')}`;
    await startRun(key, 'drain');
    // Drained before any call: each agent's first call (the one that asks for the command) is held, not sent and not
    // failed, for longer than the agent's 60 s budget and the model call's heartbeat timeout (2 minutes): a weight
    // swap may take that long, and the turn's budget must not pay for it.
    expect((await postJson(`${serving.url}/runs/${key}/drain`, {})).body).toMatchObject({ draining: true });
    await new Promise((r) => setTimeout(r, HOLD_MS));
    expect(seenFor('drain')).toHaveLength(0);
    expect(await status(key)).toMatchObject({ running: 2, lastSeq: 0, counters: { masked: 0, scored: 0 }, policy: { draining: true } });

    expect((await postJson(`${serving.url}/runs/${key}/resume`, {})).body).toMatchObject({ draining: false });
    const { acked: [group] } = await ackGroups(serving.url, key, 1, 240_000);
    expect(group!.rows.map((r) => [r.valid, r.reward, r.attempt])).toEqual([[true, 1, 1], [true, 1, 1]]);
    expect(seenFor('drain')).toHaveLength(4);
    for (const row of group!.rows) {
      const records = parseTokenRecords(readFileSync(row.tokens!, 'utf8'));
      expect(records).toHaveLength(2);
      // The first call waited at the gateway for the resume (the sandbox's seed took part of the drain), past the
      // agent's budget; the command it asked for still ran (reward 1 above).
      expect(records[0]!.timing.held_ms).toBeGreaterThan(60_000);
      expect(records[1]!.timing.held_ms).toBeLessThan(5_000);
    }
    expect((await status(key)).counters).toMatchObject({ scored: 2, masked: 0, retried: 0 });
    await noContainersLeft(`berth.batch=rollout-${key}`, 60_000);
  }, 600_000);
});
