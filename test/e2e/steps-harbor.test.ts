import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBatch } from '../../src/client/batch.ts';
import { startTestWorkers, type TestCluster } from '../helpers/temporal.ts';
import { writeDataset } from '../helpers/tasks.ts';
import type { ResultRow } from '../../src/workflows/types.ts';

// Issue 37, wrong rewards: multi-step tasks that Harbor 0.25 ran as they stand here (`harbor trial start -a oracle`
// on berth-base:bookworm), run end to end on the real engine and Temporal, with what Harbor did beside each.
const TOML_HEAD = '[environment]\ndocker_image = "berth-base:bookworm"\n[agent]\ntimeout_sec = 120\n[[verifier.collect]]\ncommand = "echo task >> /tmp/order"\n';
const ORDER_IS = (lines: string) => `[ "$(cat /tmp/order)" = "$(printf '${lines}')" ] && ok=1 || ok=0`;

const gate = {
  'gate/task.toml': `${TOML_HEAD}[[steps]]\nname = "one"\nmin_reward = 0.5\n[[steps.verifier.collect]]\ncommand = "echo step-one >> /tmp/order"\n[[steps]]\nname = "two"\n`,
  'gate/instruction.md': 'hidden\n',
  'gate/solution/solve.sh': '#!/bin/bash\ntrue\n',
  'gate/steps/one/instruction.md': 'Step one.\n',
  // No `reward` key: the turn scores the sum of its keys (Task Folder Verifiers § Reward files), 2 here.
  'gate/steps/one/tests/test.sh': `#!/bin/bash\n${ORDER_IS('task\\nstep-one')}\necho "{\\"score\\": 1, \\"order_ok\\": $ok}" > /logs/verifier/reward.json\n`,
  'gate/steps/two/instruction.md': 'Step two.\n',
  'gate/steps/two/tests/test.sh': '#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n',
};

const means = {
  'means/task.toml': `${TOML_HEAD}[[steps]]\nname = "a"\n[[steps]]\nname = "b"\n[[steps.verifier.collect]]\ncommand = "echo b >> /tmp/order"\n`,
  'means/instruction.md': 'hidden\n',
  'means/solution/solve.sh': '#!/bin/bash\ntrue\n',
  'means/steps/a/instruction.md': 'A\n',
  'means/steps/a/tests/test.sh': '#!/bin/bash\necho \'{"x": 1, "y": 0.5}\' > /logs/verifier/reward.json\n',
  'means/steps/b/instruction.md': 'B\n',
  'means/steps/b/tests/test.sh': `#!/bin/bash\n${ORDER_IS('task\\ntask\\nb')}\necho "{\\"x\\": $ok}" > /logs/verifier/reward.json\n`,
};

describe('multi-step rewards and collect hooks as Harbor 0.25 runs them (issue 37)', () => {
  let cluster: TestCluster;
  let rows: ResultRow[];
  const row = (id: string) => rows.find((r) => r.task_id === id)!;
  beforeAll(async () => {
    cluster = await startTestWorkers('steps-harbor');
    rows = (await (await startBatch({
      dataset: writeDataset({ ...gate, ...means }), resultsDir: mkdtempSync(join(tmpdir(), 'berth-steps-harbor-')),
      taskQueue: cluster.taskQueue, client: cluster.client,
    })).wait()).rows;
  }, 300_000);
  afterAll(async () => { await cluster?.stop(); });

  // Harbor: min_reward = 0.5 stopped the trial after step one, whose rewards were {"score": 1} (`score` is no
  // `reward` key: -inf in trial/multi_step.py _min_reward_failure); step two never ran.
  it('a number min_reward fails a turn whose reward.json has no `reward` key, and the episode stops there', () => {
    expect(row('gate')).toMatchObject({ stopped_after_turn: 'one', mask_sample: false, failure_kind: null });
    expect(row('gate').turns.map((t) => t.step)).toEqual(['one']);
  });

  // Harbor: step one's /tmp/order read "task", "step-one"; step b's read "task", "task", "b" (step a ran the task's
  // hook alone), both before the step's verifier.
  it('runs [[steps.verifier.collect]] after the task\'s hooks, before the step\'s verifier', () => {
    expect(row('gate').turns.map((t) => t.verifier_rewards)).toEqual([{ score: 1, order_ok: 1 }]);
    expect(row('means').turns.map((t) => t.verifier_rewards)).toEqual([{ x: 1, y: 0.5 }, { x: 1 }]);
  });

  // Harbor: the trial's rewards were {"x": 1.0, "y": 0.25}, per-key means over both steps with y missing from step b
  // counting 0. Berth's reward_components are the same means of the turns' components (reward.json without `reward`).
  it('a multi-step mean keeps reward_components as per-key means', () => {
    const m = row('means');
    expect(m).toMatchObject({ stopped_after_turn: null, mask_sample: false });
    expect(m.verifier_rewards).toEqual({ x: 1, y: 0.25 });
    expect(m.reward_components).toEqual({ x: 1, y: 0.25 });
    expect(m.reward).toBeCloseTo((1.5 + 1) / 2);
  });
});
