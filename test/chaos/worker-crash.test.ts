import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
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

describe('a worker killed with -9 inside turn 2 (DESIGN.md section 3, Surviving restarts)', () => {
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
