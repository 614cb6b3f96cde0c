// Issue 24: every batch's results folder is also a Harbor job directory, read by Harbor 0.25's own models (its
// JobConfig, JobResult, TrialConfig, TrialResult and ATIF Trajectory) and served by `harbor view`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cpSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBatch, type BatchHandle } from '../../src/client/batch.ts';
import type { ResultRow } from '../../src/client/index.ts';
import { startTestWorkers, type TestCluster } from '../helpers/temporal.ts';
import { BASE_TOML, echoTask, writeDataset } from '../helpers/tasks.ts';
import { readWithHarbor, startHarborView, type HarborRead } from '../helpers/harbor.ts';
import { artifactPath, launchChromium } from '../ui/browser.ts';

const BASE = 'berth-base:bookworm';
const examples = join(import.meta.dirname, '..', '..', 'examples');
const rewardIf = (cond: string, yes: string) => `#!/bin/bash\nif ${cond}; then echo ${yes} > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi\n`;
const step = (n: number) => ({
  [`multi/steps/s${n}/instruction.md`]: `Step ${n}: write ${n} to /app/s${n}\n`,
  [`multi/steps/s${n}/solution/solve.sh`]: `#!/bin/bash\necho ${n} > /app/s${n}\n`,
  [`multi/steps/s${n}/tests/test.sh`]: rewardIf(`[ "$(cat /app/s${n})" = ${n} ]`, '1'),
});

function dataset(): string {
  const root = writeDataset({
    ...echoTask('single'),
    ...echoTask('needs-token', 'ok', `${BASE_TOML}[environment.env]\nTOKEN = "\${BERTH_H24_TOKEN}"\n`),
    'multi/task.toml': `[environment]\ndocker_image = "${BASE}"\nworkdir = "/app"\n${[1, 2].map((n) => `[[steps]]\nname = "s${n}"\n[steps.agent]\ntimeout_sec = 60\n[steps.verifier]\ntimeout_sec = 60\n`).join('')}`,
    ...step(1), ...step(2),
    'separate/task.toml': ['artifacts = ["/app/out.txt"]', '[environment]', `docker_image = "${BASE}"`, 'workdir = "/app"', '[agent]', 'timeout_sec = 60',
      '[verifier]', 'timeout_sec = 60', 'environment_mode = "separate"', '[verifier.environment]', `docker_image = "${BASE}"`].join('\n'),
    'separate/instruction.md': 'write ok\n',
    'separate/solution/solve.sh': '#!/bin/bash\necho ok > /app/out.txt\n',
    'separate/tests/test.sh': rewardIf('grep -q ok /app/out.txt', '1'),
  });
  cpSync(join(examples, 'compose-hello'), join(root, 'compose-hello'), { recursive: true });
  return root;
}

const trialsOf = (read: HarborRead, task: string) => read.trials.filter((t) => t.task_name === task);
const resultOf = (dir: string, trial: string) => JSON.parse(readFileSync(join(dir, trial, 'result.json'), 'utf8')) as { berth: { attempt: number } & Record<string, unknown> };

describe("a batch's results folder is a Harbor job directory (issue 24)", () => {
  let cluster: TestCluster;
  let handle: BatchHandle;
  let jobDir: string;
  let root: string;
  let rows: ResultRow[];
  beforeAll(async () => {
    cluster = await startTestWorkers('harbor-job');
    delete process.env.BERTH_H24_TOKEN;
    root = dataset();
    jobDir = join(mkdtempSync(join(tmpdir(), 'berth-jobs-')), 'batch');
    handle = await startBatch({ dataset: root, resultsDir: jobDir, taskQueue: cluster.taskQueue, client: cluster.client });
    rows = (await handle.wait()).rows;
  }, 600_000);
  afterAll(async () => { await cluster?.stop(); });

  it("Harbor's models read every file for single-step, multi-step, separate-verifier, Compose and masked episodes", async () => {
    expect(rows.map((r) => [r.task_id, r.reward])).toEqual([['compose-hello', 1], ['multi', 1], ['needs-token', null], ['separate', 1], ['single', 1]]);
    const read = await readWithHarbor(jobDir);
    expect(read.errors).toEqual([]);
    expect(read).toMatchObject({ job_name: handle.batchId, n_attempts: 1, n_total_trials: 5 });
    expect(read.trials).toHaveLength(5);
    for (const t of read.trials) expect(t.name).toBe(t.config_trial_name);
    for (const t of read.trials) expect(t.name).toMatch(new RegExp(`^${t.task_name}__[2-9A-HJ-NP-Za-km-z]{7}$`));
    // Single-step trials keep agent/ and verifier/ at the trial's root; a multi-step one under steps/<name>/.
    for (const task of ['single', 'separate', 'compose-hello']) {
      const [t] = trialsOf(read, task);
      expect(t).toMatchObject({ rewards: { reward: 1 }, exception_type: null, steps: null, trajectories: ['agent/trajectory.json'] });
      expect(existsSync(join(jobDir, t!.name, 'verifier', 'reward.txt'))).toBe(true);
      expect(readFileSync(join(jobDir, t!.name, 'trial.log'), 'utf8')).toContain(`task ${task}, repeat 1, attempt 1`);
    }
    const [multi] = trialsOf(read, 'multi');
    expect(multi).toMatchObject({ rewards: { reward: 1 }, steps: ['s1', 's2'], trajectories: ['steps/s1/agent/trajectory.json', 'steps/s2/agent/trajectory.json'] });
    // Masked: exception_info with its failure kind and reason, no verifier_result; the job counts it by kind.
    const [masked] = trialsOf(read, 'needs-token');
    expect(masked).toMatchObject({ rewards: null, exception_type: 'harbor:seed_failed' });
    expect(resultOf(jobDir, masked!.name).berth).toMatchObject({ masked: true, attempt: 1, failure_kind: 'harbor:seed_failed' });
    const [evals] = Object.entries(read.stats.evals);
    expect(evals![0]).toBe(`oracle__${root.split('/').pop()}`);
    expect(evals![1]).toMatchObject({ n_trials: 4, n_errors: 1, metrics: [{ mean: 1 }], exception_stats: { 'harbor:seed_failed': [masked!.name] } });
    expect(read.stats).toMatchObject({ n_completed_trials: 5, n_errored_trials: 1, n_retries: 0, n_pending_trials: 0 });
  });

  it('`harbor view` lists the job with the trial count, mean and per-trial rewards of rollouts.jsonl, and its trial page shows the trajectory', async () => {
    const onDisk = readFileSync(join(jobDir, 'rollouts.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as ResultRow);
    const view = await startHarborView(join(jobDir, '..'));
    try {
      const jobs = await (await fetch(`${view.url}/api/jobs`)).json() as { items: Array<{ name: string; n_completed_trials: number; n_errored_trials: number; evals: Record<string, { metrics: Array<Record<string, number>> }> }> };
      const job = jobs.items.find((j) => j.name === 'batch')!;
      const scored = onDisk.filter((r) => !r.mask_sample);
      expect(job.n_completed_trials).toBe(onDisk.length);
      expect(Object.values(job.evals)[0]!.metrics[0]!.mean).toBeCloseTo(scored.reduce((a, r) => a + (r.reward ?? 0), 0) / scored.length);
      const trials = await (await fetch(`${view.url}/api/jobs/batch/trials?page_size=100`)).json() as { items: Array<{ name: string; task_name: string; reward: number | null; error_type: string | null }> };
      expect(trials.items.map((t) => [t.task_name, t.reward]).sort()).toEqual(onDisk.map((r) => [r.task_id, r.reward]).sort());
      const single = trials.items.find((t) => t.task_name === 'single')!;
      const trajectory = await (await fetch(`${view.url}/api/jobs/batch/trials/${single.name}/trajectory`)).json() as { steps: unknown[] };
      expect(trajectory.steps.length).toBeGreaterThan(0);
      const browser = await launchChromium();
      try {
        const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
        // Generous: under CI's load (about 20 suites on two cores) Chromium took over 30 s to render this page once.
        await page.goto(`${view.url}/jobs/batch/trials/${single.name}`, { timeout: 120_000 });
        await page.getByText('Running the reference solution').first().waitFor({ timeout: 120_000 });
        await page.screenshot({ path: artifactPath('harbor-view-trial.png'), fullPage: true });
      } finally {
        await browser.close();
      }
    } finally {
      await view.stop();
    }
  }, 360_000);

  it('a retried masked episode and a regraded one add trials; the newest attempt is the one the stats count', async () => {
    process.env.BERTH_H24_TOKEN = 'set-now';
    const retried = await handle.retry({ masked: true });
    expect(retried.retried).toEqual([`berth/${handle.batchId}/needs-token/1~a2`]);
    writeFileSync(join(root, 'separate/tests/test.sh'), rewardIf('grep -q ok /app/out.txt', '0.5'));
    const regraded = await handle.regrade({ taskIds: ['separate'] });
    expect(regraded.failed).toEqual([]);
    const read = await readWithHarbor(jobDir);
    expect(read.errors).toEqual([]);
    expect(read.trials).toHaveLength(7);
    const tokens = trialsOf(read, 'needs-token').map((t) => ({ ...resultOf(jobDir, t.name).berth, exception_type: t.exception_type, rewards: t.rewards }));
    expect(tokens.map((t) => [t.attempt, t.exception_type, t.rewards?.reward ?? null]).sort()).toEqual([[1, 'harbor:seed_failed', null], [2, null, 1]]);
    const separate = trialsOf(read, 'separate').map((t) => ({ ...resultOf(jobDir, t.name).berth, rewards: t.rewards }));
    const regrade = separate.find((t) => t.attempt === 2)!;
    expect(regrade).toMatchObject({ regraded_from: `berth/${handle.batchId}/separate/1`, rewards: { reward: 0.5 } });
    const [evals] = Object.values(read.stats.evals);
    expect(read.stats).toMatchObject({ n_completed_trials: 5, n_errored_trials: 0, n_retries: 2 });
    expect(evals).toMatchObject({ n_trials: 5, n_errors: 0, exception_stats: {} });
    expect(evals!.metrics[0]!.mean).toBeCloseTo((1 + 1 + 1 + 0.5 + 1) / 5);
  }, 600_000);
});
