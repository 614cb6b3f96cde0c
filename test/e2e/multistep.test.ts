import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBatch } from '../../src/client/batch.ts';
import { startTestWorkers, type TestCluster } from '../helpers/temporal.ts';
import { writeDataset } from '../helpers/tasks.ts';

// multi-step-tasks.md end to end on task folders written here: roll-up, gates, early stop, clearing between turns.
const steps = (strategy: string, gates: Array<string | null>, rewards: string[]) => ({
  'm/task.toml': `multi_step_reward_strategy = "${strategy}"\n[environment]\ndocker_image = "berth-base:bookworm"\nworkdir = "/app"\n` +
    rewards.map((_, i) => `[[steps]]\nname = "s${i + 1}"\n${gates[i] ? `min_reward = ${gates[i]}\n` : ''}`).join(''),
  'm/tests/common.sh': 'ran() { echo "$1" >> /app/verified; }\n',
  ...Object.fromEntries(rewards.flatMap((r, i) => [
    [`m/steps/s${i + 1}/instruction.md`, `Step ${i + 1}\n`],
    [`m/steps/s${i + 1}/solution/solve.sh`, `#!/bin/bash\necho s${i + 1} >> /app/agent-ran\n# what the previous turn left for grading must be gone\n[ -e /logs/verifier/reward.txt ] && echo stale >> /app/agent-ran\ntrue\n`],
    [`m/steps/s${i + 1}/tests/test.sh`, `#!/bin/bash\nsource /tests/common.sh\nran s${i + 1}\ngrep -q stale /app/agent-ran && { echo 0 > /logs/verifier/reward.txt; exit 0; }\n${r}\n`],
  ])),
});

describe('multi-step episodes end to end (multi-step-tasks.md)', () => {
  let cluster: TestCluster;
  beforeAll(async () => { cluster = await startTestWorkers('multistep'); });
  afterAll(async () => { await cluster?.stop(); });
  const run = async (files: Record<string, string>) => (await (await startBatch({
    dataset: writeDataset(files), resultsDir: mkdtempSync(join(tmpdir(), 'berth-ms-')), taskQueue: cluster.taskQueue, client: cluster.client,
  })).wait()).rows[0]!;

  it('mean over every turn, per-key means with a missing key as 0, the task tests layered under each step', async () => {
    const row = await run(steps('mean', [null, null], [
      'echo \'{"reward": 1, "style": 1}\' > /logs/verifier/reward.json',
      'echo 0.5 > /logs/verifier/reward.txt',
    ]));
    expect(row).toMatchObject({ reward: 0.75, stopped_after_turn: null, mask_sample: false });
    expect(row.verifier_rewards).toEqual({ reward: 0.75, style: 0.5 });
    expect(row.turns.map((t) => [t.step, t.reward])).toEqual([['s1', 1], ['s2', 0.5]]);
  });

  it('a missed min_reward stops the episode after that turn, and stopped_after_turn names its step (§ Early stop)', async () => {
    const row = await run(steps('mean', [null, '0.9', null], ['echo 1 > /logs/verifier/reward.txt', 'echo 0.2 > /logs/verifier/reward.txt', 'echo 1 > /logs/verifier/reward.txt']));
    expect(row).toMatchObject({ stopped_after_turn: 's2', reward: 0.6 });
    expect(row.turns).toHaveLength(2);
  });

  it('a turn without a reward file stops the episode and carries harbor:missing_reward; final takes the last turn', async () => {
    const row = await run(steps('final', [null, null, null], ['echo 1 > /logs/verifier/reward.txt', 'true', 'echo 1 > /logs/verifier/reward.txt']));
    expect(row).toMatchObject({ stopped_after_turn: 's2', reward: 0, failure_kind: 'harbor:missing_reward', mask_sample: false });
  });
});

describe('per-step agent user (multi-step-tasks.md § Per-step agent user)', () => {
  let cluster: TestCluster;
  beforeAll(async () => { cluster = await startTestWorkers('stepuser'); });
  afterAll(async () => { await cluster?.stop(); });

  it('each turn runs as its step user, owns the working directory, and switches back for a step with none', async () => {
    const check = (who: string) => `[ "$(stat -c %U /app)" = "${who}" ] && grep -qx "${who}" /app/who-$STEP && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt`;
    const files: Record<string, string> = {
      'u/task.toml': '[environment]\nworkdir = "/app"\n' +
        '[[steps]]\nname = "a"\n[steps.agent]\nuser = "alice"\n[[steps]]\nname = "b"\n',
      'u/environment/Dockerfile': 'FROM berth-base:bookworm\nRUN useradd -m alice\nWORKDIR /app\n',
    };
    for (const [step, who] of [['a', 'alice'], ['b', 'root']] as const) {
      files[`u/steps/${step}/instruction.md`] = `step ${step}\n`;
      files[`u/steps/${step}/solution/solve.sh`] = `#!/bin/bash\nwhoami > /app/who-${step}\n`;
      files[`u/steps/${step}/tests/test.sh`] = `#!/bin/bash\nSTEP=${step}\n${check(who)}\n`;
    }
    const row = (await (await startBatch({ dataset: writeDataset(files), resultsDir: mkdtempSync(join(tmpdir(), 'berth-su-')), taskQueue: cluster.taskQueue, client: cluster.client })).wait()).rows[0]!;
    expect(row.turns.map((t) => t.reward)).toEqual([1, 1]);
  });
});
