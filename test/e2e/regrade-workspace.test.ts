import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBatch } from '../../src/client/batch.ts';
import { startTestWorkers, type TestCluster } from '../helpers/temporal.ts';
import { writeDataset } from '../helpers/tasks.ts';

const BASE = 'berth-base:bookworm';

// Task Folder Verifiers § Python verifiers: `workspace` is the task's working directory, in separate mode where the
// artifacts restore it (the verifier environment's own working directory is elsewhere). A regrade restores the same
// artifacts into a fresh verifier, with the agent's sandbox long gone: the workspace is still the task's /app.
describe('a separate Python verifier\'s workspace on a regrade (issue 37)', () => {
  let cluster: TestCluster;
  beforeAll(async () => { cluster = await startTestWorkers('regrade-ws'); });
  afterAll(async () => { await cluster?.stop(); });

  it('is the task\'s working directory in the first verification and in the regrade', async () => {
    const root = writeDataset({
      'py/task.toml': [
        'artifacts = ["/app"]',
        '[environment]', `docker_image = "${BASE}"`, 'workdir = "/app"',
        '[agent]', 'timeout_sec = 60',
        '[verifier.environment]', `docker_image = "${BASE}"`, 'workdir = "/grader"',
      ].join('\n'),
      'py/instruction.md': 'Write blue to answer.txt\n',
      'py/solution/solve.sh': '#!/bin/bash\necho blue > answer.txt\n',
      'py/tests/verifier.py': [
        'from nemo_gym.verifiers.files import read_text',
        '',
        'def verify(workspace):',
        '    return float(read_text(workspace, "answer.txt") == "blue")',
        '',
      ].join('\n'),
    });
    const handle = await startBatch({ dataset: root, resultsDir: mkdtempSync(join(tmpdir(), 'berth-regrade-ws-')), taskQueue: cluster.taskQueue, client: cluster.client });
    expect((await handle.wait()).rows.map((r) => [r.task_id, r.reward, r.verifier_mode])).toEqual([['py', 1, 'separate']]);
    const again = await handle.regrade();
    expect(again.skipped).toEqual([]);
    expect(again.failed).toEqual([]);
    expect(again.rows.map((r) => [r.task_id, r.attempt, r.reward, r.mask_sample])).toEqual([['py', 2, 1, false]]);
  }, 300_000);
});
