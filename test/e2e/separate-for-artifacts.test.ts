// berth.toml [episode].separate_verifier_for_artifacts (Task Folder Verifiers § Shared and separate verification):
// a single-step task that declares artifacts is verified in a fresh sandbox that holds only its artifacts; a
// multi-step task that declares artifacts is refused (Multi-Step Harbor Tasks § Verification per step).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBatch } from '../../src/client/batch.ts';
import { startTestWorkers, type TestCluster } from '../helpers/temporal.ts';
import { writeDataset } from '../helpers/tasks.ts';

// Rewards 1 in a separate sandbox (the artifact restored, the agent's other file absent), 0 in the agent's.
const dataset = () => writeDataset({
  'art/task.toml': 'artifacts = ["/app/out.txt"]\n[environment]\ndocker_image = "berth-base:bookworm"\nworkdir = "/app"\n',
  'art/instruction.md': 'write out.txt\n',
  'art/solution/solve.sh': '#!/bin/bash\necho answer > /app/out.txt\necho private > /app/private.txt\n',
  'art/tests/test.sh': '#!/bin/bash\n[ "$(cat /app/out.txt)" = answer ] && [ ! -e /app/private.txt ] && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt\n',
  'steps/task.toml': 'artifacts = ["/app/out.txt"]\n[environment]\ndocker_image = "berth-base:bookworm"\n[[steps]]\nname = "one"\n',
  'steps/steps/one/instruction.md': 'one\n',
  'steps/tests/test.sh': '#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n',
});

describe('separate_verifier_for_artifacts end to end', () => {
  let cluster: TestCluster;
  beforeAll(async () => { cluster = await startTestWorkers('separate-artifacts'); });
  afterAll(async () => { await cluster?.stop(); });
  const run = async (toml: string) => {
    const configFile = join(mkdtempSync(join(tmpdir(), 'berth-config-')), 'berth.toml');
    writeFileSync(configFile, toml);
    const handle = await startBatch({ dataset: dataset(), configFile, resultsDir: mkdtempSync(join(tmpdir(), 'berth-sva-')), taskQueue: cluster.taskQueue, client: cluster.client });
    return { rows: (await handle.wait()).rows, skipped: handle.skipped };
  };

  it('on: the task verifies in a fresh sandbox holding its artifacts; the multi-step task is listed as refused', async () => {
    const { rows, skipped } = await run('[episode]\nseparate_verifier_for_artifacts = true\n');
    expect(rows.find((r) => r.task_id === 'art')).toMatchObject({ reward: 1, verifier_mode: 'separate', mask_sample: false });
    expect(skipped.map((s) => [s.task_id, s.stage])).toEqual([['steps', 'load']]);
    expect(skipped[0]!.reason).toContain('episode.separate_verifier_for_artifacts');
  });

  it('off: the same task verifies in the agent\'s sandbox (its private file is there: 0)', async () => {
    const { rows } = await run('');
    expect(rows.find((r) => r.task_id === 'art')).toMatchObject({ reward: 0, verifier_mode: 'shared' });
    expect(rows.find((r) => r.task_id === 'steps')).toMatchObject({ reward: 1 });
  });
});
