import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBatch } from '../../src/client/batch.ts';
import { startTestWorkers, type TestCluster } from '../helpers/temporal.ts';
import { writeDataset } from '../helpers/tasks.ts';
import { bashCall, finalMessage, startScriptedServer } from '../agents/scripted-openai.ts';

// Multi-Step Harbor Tasks end to end on task folders written here: roll-up, gates, early stop, clearing between turns.
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

describe('multi-step episodes end to end (Multi-Step Harbor Tasks)', () => {
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

describe('per-step agent user (Multi-Step Harbor Tasks § Per-step agent user)', () => {
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

// Multi-Step Harbor Tasks § Reward roll-up and § Early stop: a turn is judged by its verifier. The agent's model ending a
// turn (here --max-tokens) stays on the turn as its kind, and the verifier's reward counts in the mean, as the
// single-step row already reports it (a scored row with the verifier's reward and the agent's kind).
describe('a turn the model ended is judged by its verifier (issue 22)', () => {
  let cluster: TestCluster;
  beforeAll(async () => {
    process.env.BERTH_TEST_OPENAI_KEY = 'sk-test-steps-7f3a';
    cluster = await startTestWorkers('ms-limit');
  });
  afterAll(async () => { await cluster?.stop(); });

  it('turn 2 ends on --max-tokens: the row is the mean of both verifier rewards and turn 2 carries agent:max_tokens', async () => {
    // Turn 1: one bash call and a final answer (280 tokens, under the limit). Turn 2: its first call alone passes it.
    // Turn 3 (the limit counts each turn's calls): a final answer.
    const server = await startScriptedServer([
      bashCall('call_1', 'echo one > /app/one.txt'), finalMessage('step 1 done'),
      bashCall('call_2', 'echo two > /app/two.txt', [2000, 20]),
      finalMessage('step 3 done'),
    ]);
    try {
      const dataset = writeDataset({
        'l/task.toml': '[environment]\ndocker_image = "berth-base:bookworm"\nworkdir = "/app"\n[agent]\ntimeout_sec = 60\n' +
          '[[steps]]\nname = "one"\n[[steps]]\nname = "two"\n[[steps]]\nname = "three"\n',
        'l/steps/one/instruction.md': 'Write /app/one.txt\n',
        'l/steps/one/tests/test.sh': '#!/bin/bash\n[ -f /app/one.txt ] && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt\n',
        'l/steps/two/instruction.md': 'Write /app/two.txt\n',
        // The limit ended the turn before its tool call ran: /app/two.txt is absent and the verifier says 0.5.
        'l/steps/two/tests/test.sh': '#!/bin/bash\n[ -f /app/two.txt ] && echo 1 > /logs/verifier/reward.txt || echo 0.5 > /logs/verifier/reward.txt\n',
        'l/steps/three/instruction.md': 'Say done\n',
        'l/steps/three/tests/test.sh': '#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n',
      });
      const summary = await (await startBatch({
        dataset, agent: 'openai', resultsDir: mkdtempSync(join(tmpdir(), 'berth-ms-limit-')), limits: { maxTokens: 1000 },
        agentArgs: { base_url: server.baseUrl, model: 'scripted-model', api_key_env: 'BERTH_TEST_OPENAI_KEY' },
        taskQueue: cluster.taskQueue, client: cluster.client,
      })).wait();
      const row = summary.rows[0]!;
      expect(row.turns.map((t) => [t.step, t.reward, t.failure_kind])).toEqual([['one', 1, null], ['two', 0.5, 'agent:max_tokens'], ['three', 1, null]]);
      // The episode went on after turn 2 (§ Early stop: its verifier wrote a valid reward) and the mean counts it.
      expect(row).toMatchObject({ stopped_after_turn: null, mask_sample: false, failure_kind: null });
      expect(row.reward).toBeCloseTo((1 + 0.5 + 1) / 3);
      expect(row.verifier_rewards.reward).toBeCloseTo((1 + 0.5 + 1) / 3);
      expect(server.requests).toHaveLength(4);
    } finally {
      await server.close();
    }
  }, 240_000);
});
