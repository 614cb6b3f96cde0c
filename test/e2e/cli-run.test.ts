import { describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { berth } from '../helpers/cli.ts';
import { writeDataset } from '../helpers/tasks.ts';

describe('`berth run examples/hello` on the embedded default (detached worker)', () => {
  it('prints a one-row table with reward 1 and the UI link, and the UI lists the episode', async () => {
    const results = mkdtempSync(join(tmpdir(), 'berth-cli-'));
    const r = await berth(['run', 'examples/hello', '--agent', 'oracle', '--results', results]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^hello\s+1\s+1\.000\s+1 scored/m);
    expect(r.stdout).toMatch(/^total\s+1 episodes of 1 tasks: 1 scored, 0 masked; mean reward 1\.000$/m);
    const link = r.stdout.match(/Temporal UI (\S+)/)?.[1];
    expect(link).toMatch(/^http:\/\/localhost:8233\/namespaces\/default\/workflows\?query=BerthBatch/);
    const batchId = r.stdout.match(/^batch (\S+)/m)?.[1];
    const query = encodeURIComponent(`BerthBatch="${batchId}" AND WorkflowType="episodeWorkflow"`);
    const listed = await (await fetch(`http://localhost:8233/api/v1/namespaces/default/workflows?query=${query}`)).json() as any;
    expect(listed.executions.map((e: any) => e.execution.workflowId)).toEqual([`berth/${batchId}/hello/1`]);
  });

  it('--json prints the rows and metrics', async () => {
    const r = await berth(['run', 'examples/hello', '--json', '--results', mkdtempSync(join(tmpdir(), 'berth-cli-'))]);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.metrics).toMatchObject({ mean_reward: 1, scored: 1, masked: 0 });
    expect(out.rows[0]).toMatchObject({ task_id: 'hello', reward: 1 });
  });

  it('a dataset path that does not exist is a clear error', async () => {
    const r = await berth(['run', 'examples/no-such-dataset']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('examples/no-such-dataset does not exist');
  });
});

// docs/design.md section 7, Secrets: [secrets] of the berth.toml in the folder `berth run` ran in reach the detached worker
// (it runs in Berth's own folder). Its own BERTH_HOME and queues, so it never takes another test's work.
describe('`berth run` from a project folder with its own berth.toml', () => {
  it('the detached worker reads that file\'s [secrets] for [verifier].env', async () => {
    const project = writeDataset({
      'berth.toml': '[secrets]\nJUDGE_TOKEN = "from-the-project-berth-toml"\n',
      'ds/sec/task.toml': '[environment]\ndocker_image = "berth-base:bookworm"\nworkdir = "/app"\n[verifier.env]\nTOKEN = "${JUDGE_TOKEN}"\n',
      'ds/sec/instruction.md': 'nothing to do\n',
      'ds/sec/solution/solve.sh': '#!/bin/bash\ntrue\n',
      'ds/sec/tests/test.sh': '#!/bin/bash\n[ "$TOKEN" = from-the-project-berth-toml ] && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt\n',
    });
    const suffix = `secrets-${randomBytes(3).toString('hex')}`;
    const env = { BERTH_HOME: mkdtempSync(join(tmpdir(), 'berth-home-')), BERTH_TASK_QUEUE: `test-${suffix}`, BERTH_HOST_QUEUE_SUFFIX: suffix };
    try {
      const r = await berth(['run', 'ds', '--agent', 'oracle', '--json', '--results', join(env.BERTH_HOME, 'results')], env, 180_000, project);
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout).rows[0]).toMatchObject({ task_id: 'sec', reward: 1, failure_reason: null });
    } finally {
      await berth(['server', 'stop'], env);
    }
  });
});

