import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBatch } from '../../src/client/batch.ts';
import { writeDataset } from '../helpers/tasks.ts';
import { noContainersLeft, waitForFileInEpisode } from '../helpers/docker.ts';
import { ownWorkerQueues } from '../helpers/worker-process.ts';

// Three steps; step 2's agent runs for a while. Step 3's verifier rewards 1 only when every
// step's agent ran exactly once, so a redone turn 1 (or a restarted turn 2) cannot score 1.
const step = (n: number, sleep: number) => ({
  [`three/steps/s${n}/instruction.md`]: `Step ${n}\n`,
  [`three/steps/s${n}/solution/solve.sh`]: `#!/bin/bash\necho run >> /app/runs-${n}\ntouch /app/started-${n}\nsleep ${sleep}\n`,
  [`three/steps/s${n}/tests/test.sh`]: `#!/bin/bash\nok=1\nfor i in $(seq 1 ${n}); do [ "$(wc -l < /app/runs-$i)" = 1 ] || ok=0; done\necho $ok > /logs/verifier/reward.txt\n`,
});
const dataset = () => writeDataset({
  'three/task.toml': `[environment]\ndocker_image = "berth-base:bookworm"\nworkdir = "/app"\n${[1, 2, 3].map((n) => `[[steps]]\nname = "s${n}"\n[steps.agent]\ntimeout_sec = 120\n[steps.verifier]\ntimeout_sec = 60\n`).join('')}`,
  ...step(1, 0), ...step(2, 12), ...step(3, 0),
});

describe('a worker killed with -9 inside turn 2 (docs/design.md section 3, Surviving restarts)', () => {
  const own = ownWorkerQueues('crash');
  const { env, workers } = own;
  afterAll(() => own.stop());

  it('finishes with the same row as an undisturbed run, and no turn ran twice', async () => {
    const client = await own.client();
    own.startWorker();
    const run = async () => startBatch({ dataset: dataset(), resultsDir: mkdtempSync(join(tmpdir(), 'berth-crash-')), taskQueue: env.BERTH_TASK_QUEUE, client });

    const calm = await (await run()).wait();
    expect(calm.rows[0]).toMatchObject({ reward: 1, mask_sample: false });

    const handle = await run();
    const workflowId = `berth/${handle.batchId}/three/1`;
    await waitForFileInEpisode(workflowId, '/app/started-2', 90_000, "turn 2's agent process");
    workers[0]!.kill9();
    own.startWorker();

    const crashed = await handle.wait();
    const pick = (r: typeof crashed.rows[number]) => ({ reward: r.reward, verifier_rewards: r.verifier_rewards, turns: r.turns, failure_kind: r.failure_kind, mask_sample: r.mask_sample, stopped_after_turn: r.stopped_after_turn });
    expect(pick(crashed.rows[0]!)).toEqual(pick(calm.rows[0]!));
    expect(crashed.rows[0]!.turns.map((t) => t.reward)).toEqual([1, 1, 1]);
    await noContainersLeft(`berth.workflow=${workflowId}`);
  }, 300_000);
});

// One step: the seed and the agent run in one activity (seedThenAgentTurn). Its retried attempt must take the sandbox
// the first one seeded (no second seed, no task files delivered again) and re-attach to the agent still running.
const single = () => writeDataset({
  'one/task.toml': '[environment]\ndocker_image = "berth-base:bookworm"\nworkdir = "/app"\n[agent]\ntimeout_sec = 120\n[verifier]\ntimeout_sec = 60\n',
  'one/instruction.md': 'Once.\n',
  'one/solution/solve.sh': '#!/bin/bash\necho run >> /app/runs\ntouch /app/started\nsleep 12\n',
  'one/tests/test.sh': '#!/bin/bash\n[ "$(wc -l < /app/runs)" = 1 ] && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt\n',
});

describe('a worker killed with -9 inside a single-step episode\'s agent (seed and agent in one activity)', () => {
  const own = ownWorkerQueues('crash1');
  const { env, workers } = own;
  afterAll(() => own.stop());

  it('the retried attempt adopts the seeded sandbox and re-attaches to the agent: scored 1, the agent ran once', async () => {
    const client = await own.client();
    own.startWorker();
    const handle = await startBatch({ dataset: single(), resultsDir: mkdtempSync(join(tmpdir(), 'berth-crash1-')), taskQueue: env.BERTH_TASK_QUEUE, client });
    const workflowId = `berth/${handle.batchId}/one/1`;
    const containerId = await waitForFileInEpisode(workflowId, '/app/started', 90_000, 'the agent process');
    workers[0]!.kill9();
    own.startWorker();

    const row = (await handle.wait()).rows[0]!;
    expect(row).toMatchObject({ reward: 1, mask_sample: false, failure_kind: null });
    const history = await client.workflow.getHandle(workflowId).fetchHistory();
    const started = (history.events ?? []).filter((e) => e.activityTaskStartedEventAttributes)
      .map((e) => ({ id: String(e.activityTaskStartedEventAttributes!.scheduledEventId), attempt: e.activityTaskStartedEventAttributes!.attempt }));
    const scheduled = new Map((history.events ?? []).filter((e) => e.activityTaskScheduledEventAttributes).map((e) => [String(e.eventId), e.activityTaskScheduledEventAttributes!.activityType?.name]));
    // The kill landed in seedThenAgentTurn, which finished on a later attempt (no seed activity of its own).
    expect(started.filter((s) => scheduled.get(s.id) === 'seedThenAgentTurn').map((s) => s.attempt).at(-1)).toBeGreaterThan(1);
    expect([...scheduled.values()]).not.toContain('seed');
    // The same container throughout: the first attempt's record, not a second seed.
    const logs = readFileSync(join(row.logs_dir!, 'seeded-sandbox.json'), 'utf8');
    expect(JSON.parse(logs).id).toBe(containerId);
    await noContainersLeft(`berth.workflow=${workflowId}`);
  }, 300_000);
});

