import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Docker from 'dockerode';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBatch } from '../../src/client/batch.ts';
import { DockerSandboxProvider, finalStateImage } from '../../src/sandbox/index.ts';
import { berth } from '../helpers/cli.ts';
import { noContainersLeft } from '../helpers/docker.ts';
import { startTestWorkers, type TestCluster } from '../helpers/temporal.ts';
import { BASE_TOML, sleepyTasks, writeDataset } from '../helpers/tasks.ts';
import { waitUntil } from '../helpers/worker-process.ts';
import { listEpisodes } from '../../src/client/episodes.ts';
import { recordHistory } from '../helpers/histories.ts';

const BASE = 'berth-base:bookworm';
const rewardIf = (cond: string, yes: string) => `#!/bin/bash\nif ${cond}; then echo ${yes} > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi\necho "graded by the ${yes} verifier"\n`;

// Each agent appends a line to a file every time it runs: a regrade that ran the agent again would leave two.
const dataset = () => writeDataset({
  'shared/task.toml': BASE_TOML,
  'shared/instruction.md': 'write ok\n',
  'shared/solution/solve.sh': '#!/bin/bash\necho ok > /app/out.txt\necho ran >> /app/runs\n',
  'shared/tests/test.sh': rewardIf('grep -q ok /app/out.txt', '1'),
  'separate/task.toml': [
    'artifacts = ["/app/out.txt", "/app/runs"]',
    '[environment]', `docker_image = "${BASE}"`, 'workdir = "/app"',
    '[agent]', 'timeout_sec = 60',
    '[verifier]', 'timeout_sec = 60', 'environment_mode = "separate"',
    '[verifier.environment]', `docker_image = "${BASE}"`,
  ].join('\n'),
  'separate/instruction.md': 'write ok\n',
  'separate/solution/solve.sh': '#!/bin/bash\necho ok > /app/out.txt\necho ran >> /app/runs\necho note > /logs/artifacts/note.txt\n',
  'separate/tests/test.sh': rewardIf('grep -q ok /app/out.txt', '1'),
});

describe('berth regrade: verification again without the agent (issue 17)', () => {
  let cluster: TestCluster;
  beforeAll(async () => { cluster = await startTestWorkers('regrade'); });
  afterAll(async () => { await cluster?.stop(); });

  it('rows after a changed test.sh reflect the new verifier, say regraded_from, and no agent ran', async () => {
    const root = dataset();
    const resultsDir = mkdtempSync(join(tmpdir(), 'berth-regrade-'));
    const handle = await startBatch({ dataset: root, keepFinalState: true, resultsDir, taskQueue: cluster.taskQueue, client: cluster.client });
    const first = await handle.wait();
    expect(first.rows.map((r) => [r.task_id, r.reward, r.verifier_mode])).toEqual([['separate', 1, 'separate'], ['shared', 1, 'shared']]);
    const shared1 = first.rows.find((r) => r.task_id === 'shared')!;
    // The shared episode's sandbox was kept as an image; the separate one needs none (its artifacts were collected).
    const docker = new Docker();
    const kept = (await new DockerSandboxProvider(docker).finalStates!.list()).filter((k) => k.batch === handle.batchId);
    expect(kept.map((k) => k.image)).toEqual([finalStateImage(shared1.workflow_id, shared1.run_id)]);

    // A verifier bug fixed: new test.sh files that also check the agent ran once.
    const once = '[ "$(wc -l < /app/runs)" = 1 ]';
    writeFileSync(join(root, 'shared/tests/test.sh'), rewardIf(`grep -q ok /app/out.txt && ${once}`, '0.25'));
    writeFileSync(join(root, 'separate/tests/test.sh'), rewardIf(`grep -q ok /app/out.txt && ${once} && [ "$(cat /logs/artifacts/note.txt)" = note ]`, '0.75'));

    const cli = await berth(['regrade', handle.batchId, '--results', resultsDir, '--json']);
    expect(cli.code, cli.stderr).toBe(0);
    const out = JSON.parse(cli.stdout);
    expect(out.skipped).toEqual([]);
    expect(out.failed).toEqual([]);
    const byTask = Object.fromEntries(out.rows.map((r: { task_id: string }) => [r.task_id, r]));
    expect(byTask.shared).toMatchObject({ attempt: 2, reward: 0.25, regraded_from: shared1.workflow_id, mask_sample: false, verifier_mode: 'shared' });
    expect(byTask.separate).toMatchObject({ attempt: 2, reward: 0.75, regraded_from: `berth/${handle.batchId}/separate/1`, verifier_mode: 'separate' });
    expect(byTask.shared.digest).not.toBe(shared1.digest);
    // The newest attempt is the one reported, in rollouts.jsonl too; the regrade's logs hold the new verifier's output.
    const rows = readFileSync(join(resultsDir, 'rollouts.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(rows.map((r) => [r.task_id, r.attempt, r.reward])).toEqual([['separate', 2, 0.75], ['shared', 2, 0.25]]);
    for (const r of rows) {
      expect(readFileSync(join(r.logs_dir, 'turn-1', 'verifier', 'test-stdout.txt'), 'utf8')).toContain(`graded by the ${r.reward} verifier`);
      expect(JSON.parse(readFileSync(join(r.logs_dir, 'turn-1', 'agent', 'trajectory.json'), 'utf8')).steps.length).toBeGreaterThan(0);
    }

    // No agent activity in the regrades' histories: a plan and one verification, nothing else.
    for (const r of rows) {
      const history = await cluster.client.workflow.getHandle(r.workflow_id).fetchHistory();
      const activities = history.events!.map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name).filter(Boolean);
      expect(activities).toEqual(['planRegrade', 'regradeTurn']);
      expect(history.events!.some((e) => e.startChildWorkflowExecutionInitiatedEventAttributes)).toBe(false);
    }
    // Replay fixtures of a regrade and of its check on the host that ran the attempt (the shapes before patch regrade-from-store).
    await recordHistory(cluster.client, byTask.separate.workflow_id, 'regrade-separate');
    for await (const wf of cluster.client.workflow.list({ query: `WorkflowType = "regradeCheckWorkflow" AND TaskQueue = "${cluster.taskQueue}"`, pageSize: 1 })) {
      await recordHistory(cluster.client, wf.workflowId, 'regrade-check');
      break;
    }
    await noContainersLeft(`berth.batch=${handle.batchId}`, 30_000);

    // berth gc removes the kept state; a shared regrade then cannot run and says why, and the regraded row stays reported.
    const gc = await berth(['gc', '--batch', handle.batchId, '--json']);
    expect(gc.code, gc.stderr).toBe(0);
    expect(JSON.parse(gc.stdout).removed.map((k: { image: string }) => k.image)).toEqual(kept.map((k) => k.image));
    // Issue 24: refused before anything starts (no attempt 3 is used up), and the command exits non-zero.
    const again = await handle.regrade({ taskIds: ['shared'] });
    expect(again.started).toEqual([]);
    expect(again.skipped).toHaveLength(1);
    expect(again.skipped[0]!.reason).toContain('--keep-final-state');
    expect(again.rows.find((r) => r.task_id === 'shared')).toMatchObject({ attempt: 2, reward: 0.25 });
    const cliAgain = await berth(['regrade', handle.batchId, '--task', 'shared', '--results', resultsDir]);
    expect(cliAgain.code).toBe(1);
    expect(cliAgain.stdout).toContain('--keep-final-state');
    expect(cliAgain.stderr).toContain('nothing regraded');
    const attempts = await listEpisodes(cluster.client, handle.batchId);
    expect(attempts.filter((e) => e.taskId === 'shared').map((e) => e.attempt).sort()).toEqual([1, 2]);
  }, 300_000);

  it('issue 24: a regrade of a batch that does not exist exits non-zero and makes no results folder', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'berth-regrade-none-'));
    const r = await berth(['regrade', 'no-such-batch-h24', '--results', join(parent, 'out')]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('No batch no-such-batch-h24');
    expect(existsSync(join(parent, 'out'))).toBe(false);
  });

  it('issue 24: a regrade asked while the episodes still run waits for them and regrades every one', async () => {
    const root = writeDataset(sleepyTasks(3, 3));
    const handle = await startBatch({ dataset: root, keepFinalState: true, resultsDir: mkdtempSync(join(tmpdir(), 'berth-regrade-')), taskQueue: cluster.taskQueue, client: cluster.client });
    // Asked while every episode still runs (as one still tearing down does): it waits for them, then regrades.
    await waitUntil(async () => (await listEpisodes(cluster.client, handle.batchId)).filter((e) => e.status === 'RUNNING').length === 3, 60_000, 'three running episodes');
    const r = await handle.regrade();
    expect(r.skipped).toEqual([]);
    expect(r.failed).toEqual([]);
    expect(r.started.map((s) => s.from).sort()).toEqual(['t0', 't1', 't2'].map((t) => `berth/${handle.batchId}/${t}/1`));
    expect(r.rows.map((x) => [x.task_id, x.attempt, x.reward])).toEqual([['t0', 2, 1], ['t1', 2, 1], ['t2', 2, 1]]);
    await berth(['gc', '--batch', handle.batchId]);
  }, 300_000);
});
