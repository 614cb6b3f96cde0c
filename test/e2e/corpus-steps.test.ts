// Issue 14: the corpus's multi-step tasks with separate step verifiers, and the cookbook's multi-step task (step
// workdir, setup.sh, healthcheck, artifacts), solved end to end by the oracle, as Harbor runs them
// (Harbor 0.25; nemo_gym.data.tasks.harbor.verifier_env, step_verifier_mode).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBatch } from '../../src/client/batch.ts';
import { homePath } from '../../src/config/paths.ts';
import type { ResultRow } from '../../src/workflows/types.ts';
import { noContainersLeft } from '../helpers/docker.ts';
import { startTestWorkers, type TestCluster } from '../helpers/temporal.ts';
import { writeDataset } from '../helpers/tasks.ts';
import { CORPUS } from '../helpers/corpus.ts';

const corpus = CORPUS;
// No registry: the corpus's base images map to the local Debian base (docs/design.md section 4).
const aliases = { 'ubuntu:24.04': 'berth-base:bookworm', 'python:3.12-slim': 'berth-base:bookworm' };

const TASKS: Record<string, string> = {
  'multistep-all-separate': 'harbor-verifier-mode-matrix',
  'multistep-top-shared-mixed': 'harbor-verifier-mode-matrix',
  'multistep-top-separate-mixed': 'harbor-verifier-mode-matrix',
  'separate-verifier-multi-step': 'harbor-examples',
  'multi-step': 'harbor-cookbook',
};

describe('multi-step corpus tasks with separate step verifiers and step setup, by the oracle (issue 14)', () => {
  let cluster: TestCluster;
  const rows = new Map<string, ResultRow>();
  const skipped: string[] = [];
  beforeAll(async () => {
    cluster = await startTestWorkers('corpus-steps');
    for (const dataset of new Set(Object.values(TASKS))) {
      const handle = await startBatch({
        dataset: join(corpus, dataset), imageAliases: aliases, concurrency: 3,
        resultsDir: mkdtempSync(join(tmpdir(), 'berth-corpus-steps-')), taskQueue: cluster.taskQueue, client: cluster.client,
        taskFilter: (id) => TASKS[id] === dataset, logger: { warn: () => undefined },
      });
      skipped.push(...handle.skipped.map((s) => `${s.task_id}: ${s.reason}`));
      for (const row of (await handle.wait()).rows) rows.set(row.task_id, row);
    }
  }, 900_000);
  afterAll(async () => { await cluster?.stop(); });

  it.each(Object.keys(TASKS))('%s scores 1 on every step', (id) => {
    const row = rows.get(id);
    expect(row, `skipped: ${skipped.join('; ')}`).toBeDefined();
    expect(row!.failure_reason).toBeNull();
    expect(row).toMatchObject({ reward: 1, mask_sample: false, failure_kind: null, stopped_after_turn: null });
    expect(row!.turns.every((t) => t.reward === 1)).toBe(true);
  });

  it('each step\'s logs go under steps/<name>/, its artifacts (the task\'s and the step\'s) beside the verifier logs', () => {
    const logs = rows.get('separate-verifier-multi-step')!.logs_dir!;
    const two = join(logs, 'steps', 'finish-artifacts');
    expect(readFileSync(join(two, 'verifier', 'reward.txt'), 'utf8').trim()).toBe('1');
    expect(readFileSync(join(two, 'artifacts', 'tmp', 'task-configured.txt'), 'utf8').trim()).toBe('task configured');
    expect(readFileSync(join(two, 'artifacts', 'tmp', 'step-two-configured.txt'), 'utf8').trim()).toBe('step two configured');
    expect(existsSync(join(logs, 'steps', 'prepare-artifacts', 'artifacts', 'tmp', 'step-one-configured.txt'))).toBe(true);
    expect(existsSync(join(logs, 'steps', 'prepare-artifacts', 'artifacts', 'tmp', 'step-two-configured.txt'))).toBe(false);
  });

  it('the cookbook task: setup.sh ran from the uploaded workdir (its marker collected), step artifacts only after their step', () => {
    const logs = rows.get('multi-step')!.logs_dir!;
    const art = (step: string, rel: string) => join(logs, 'steps', step, 'artifacts', rel);
    expect(readFileSync(art('implement', 'setup-marker.txt'), 'utf8')).toMatch(/^setup\.sh ran at /);
    expect(existsSync(art('scaffold', 'setup-marker.txt'))).toBe(false);
    expect(readFileSync(art('document', 'app/README.md'), 'utf8')).toContain('# greet.sh');
    expect(existsSync(art('implement', 'app/README.md'))).toBe(false);
    expect(readFileSync(art('scaffold', 'app/greet.sh'), 'utf8')).toContain('echo "hello"');
    const manifest = JSON.parse(readFileSync(art('document', 'manifest.json'), 'utf8')) as Array<{ source: string; status: string }>;
    expect(manifest.map((m) => [m.source, m.status])).toEqual([['/logs/artifacts', 'ok'], ['/app/greet.sh', 'ok'], ['/app/README.md', 'ok']]);
  });

  it('prepare made the separate steps\' verifier images ready and recorded them with the task\'s', () => {
    const dir = homePath('images');
    const record = readdirSync(dir).filter((f) => f.startsWith('multistep-top-shared-mixed-')).map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as { digest: string; verifier_images?: string[] })
      .find((r) => r.digest === rows.get('multistep-top-shared-mixed')!.digest);
    expect(record?.verifier_images).toHaveLength(1);
    expect(record!.verifier_images![0]).toMatch(/^hb__[0-9a-f]+-verifier$/);
  });

  it('no verifier or agent sandbox is left behind', async () => {
    for (const row of rows.values()) await noContainersLeft(`berth.workflow=${row.workflow_id}`);
  });
});

// A step's setup that fails ends the episode there (no later step runs). On the first step (no agent has run yet) it is
// the task's fault and masks; on a later step an earlier agent may have caused it, so the turn scores 0 under every key
// (issue 22; Multi-Step Harbor Tasks § Reward roll-up: a turn with no valid reward counts 0 and ends the episode).
const setupTask = (setup: string, healthcheck = '', at = 'second', files: Record<string, string> = {}) => writeDataset({
  's/task.toml': '[environment]\ndocker_image = "berth-base:bookworm"\nworkdir = "/app"\n' +
    ['first', 'second', 'third'].map((n) => `[[steps]]\nname = "${n}"\n${n === at ? healthcheck : ''}`).join(''),
  's/tests/test.sh': '#!/bin/bash\necho 1 > /logs/verifier/reward.txt\necho "$STEP" >> /app/verified\n',
  ...Object.fromEntries(['first', 'second', 'third'].flatMap((n) => [
    [`s/steps/${n}/instruction.md`, `${n}\n`],
    [`s/steps/${n}/solution/solve.sh`, `#!/bin/bash\necho ${n} >> /app/agents\n`],
  ])),
  ...(setup ? { [`s/steps/${at}/workdir/setup.sh`]: setup, [`s/steps/${at}/workdir/data.txt`]: 'fixture\n' } : {}),
  ...Object.fromEntries(Object.entries(files).map(([k, v]) => [`s/${k}`, v])),
});

describe('a failing step setup ends the episode: masked on the first step, scored 0 on a later one (issue 22, harbor:step_setup_failed)', () => {
  let cluster: TestCluster;
  beforeAll(async () => { cluster = await startTestWorkers('step-setup'); });
  afterAll(async () => { await cluster?.stop(); });
  const run = async (dataset: string) => (await (await startBatch({
    dataset, resultsDir: mkdtempSync(join(tmpdir(), 'berth-setup-')), taskQueue: cluster.taskQueue, client: cluster.client,
  })).wait()).rows[0]!;

  it('setup.sh runs as the step\'s agent user in the working directory, beside the uploaded files; a later step\'s non-zero exit scores that turn 0 with its output', async () => {
    const row = await run(setupTask('#!/bin/bash\n[ "$PWD" = /app ] && [ -f data.txt ] && echo "setup saw $(cat data.txt) as $(whoami)"\necho "cannot continue" >&2\nexit 3\n'));
    expect(row).toMatchObject({ mask_sample: false, reward: 0.5, failure_kind: 'harbor:step_setup_failed', stopped_after_turn: 'second' });
    expect(row.failure_reason).toContain('step "second": workdir/setup.sh exited with code 3');
    expect(row.failure_reason).toContain('setup saw fixture as root');
    expect(row.failure_reason).toContain('cannot continue');
    // The first step ran and was graded; the second's agent never ran and it counts 0; the third never started.
    expect(row.turns.map((t) => [t.step, t.reward, t.failure_kind])).toEqual([['first', 1, null], ['second', 0, 'harbor:step_setup_failed']]);
    expect(row.verifier_rewards).toEqual({ reward: 0.5 });
    expect(readFileSync(join(row.logs_dir!, 'steps', 'second', 'setup-output.txt'), 'utf8')).toContain('cannot continue');
  });

  it('step 2\'s setup.sh fails because step 1\'s agent deleted its input: the agent does not escape its score', async () => {
    const row = await run(setupTask('#!/bin/bash\ncp /app/input.txt /app/step2-input.txt\n', '', 'second', {
      'steps/first/workdir/input.txt': 'what step 2 needs\n',
      'steps/first/solution/solve.sh': '#!/bin/bash\nrm /app/input.txt\necho first >> /app/agents\n',
    }));
    expect(row, row.failure_reason ?? '').toMatchObject({ mask_sample: false, reward: 0.5, failure_kind: 'harbor:step_setup_failed', stopped_after_turn: 'second' });
    expect(row.failure_reason).toContain('/app/input.txt');
    expect(row.turns.map((t) => [t.step, t.reward, t.failure_kind])).toEqual([['first', 1, null], ['second', 0, 'harbor:step_setup_failed']]);
  });

  it('the first step\'s setup (before any agent ran) is the task\'s fault: masked; retry --masked keeps it (not retryable: src/outcomes); naming it retries it', async () => {
    const handle = await startBatch({
      dataset: setupTask('#!/bin/bash\nexit 4\n', '', 'first'), resultsDir: mkdtempSync(join(tmpdir(), 'berth-setup-')), taskQueue: cluster.taskQueue, client: cluster.client,
    });
    const [row] = (await handle.wait()).rows;
    expect(row).toMatchObject({ mask_sample: true, reward: null, failure_kind: 'harbor:step_setup_failed', stopped_after_turn: 'first' });
    expect(row!.turns.map((t) => [t.step, t.failure_kind])).toEqual([['first', 'harbor:step_setup_failed']]);
    const masked = await handle.retry({ masked: true });
    expect(masked.retried).toEqual([]);
    expect(masked.kept).toEqual([{ workflowId: row!.workflow_id, failureKind: 'harbor:step_setup_failed' }]);
    const named = await handle.retry({ taskIds: [row!.task_id] });
    expect(named.retried).toEqual([`${row!.workflow_id}~a2`]);
    expect(named.rows[0]).toMatchObject({ attempt: 2, failure_kind: 'harbor:step_setup_failed', mask_sample: true });
  });

  it('a later [steps.healthcheck] that never passes scores that turn 0 the same way', async () => {
    const row = await run(setupTask('', '[steps.healthcheck]\ncommand = "test -f /app/never"\ninterval_sec = 0.2\ntimeout_sec = 2\nretries = 2\n'));
    expect(row).toMatchObject({ mask_sample: false, reward: 0.5, failure_kind: 'harbor:step_setup_failed' });
    expect(row.failure_reason).toMatch(/step "second": \[steps\.healthcheck\] healthcheck `test -f \/app\/never` failed 2 times/);
  });

  it('as a non-root agent user: setup.sh runs as that user in a working directory it owns, and the step healthcheck sees its file', async () => {
    const dataset = writeDataset({
      'u/task.toml': '[environment]\ndocker_image = "berth-base:bookworm"\nworkdir = "/app"\n[agent]\nuser = "nobody"\n' +
        '[[steps]]\nname = "only"\n[steps.healthcheck]\ncommand = "[ \\"$(stat -c %U /app/ready)\\" = nobody ]"\ninterval_sec = 0.2\nretries = 3\n',
      'u/tests/test.sh': '#!/bin/bash\n[ "$(cat /app/setup-user)" = nobody ] && [ -f /app/agent-ran ] && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt\n',
      'u/steps/only/instruction.md': 'only\n',
      'u/steps/only/solution/solve.sh': '#!/bin/bash\ntouch /app/agent-ran\n',
      'u/steps/only/workdir/setup.sh': '#!/bin/bash\nwhoami > /app/setup-user\ntouch /app/ready\n',
    });
    const row = await run(dataset);
    expect(row, row.failure_reason ?? '').toMatchObject({ reward: 1, mask_sample: false, failure_kind: null });
  });

  it('a passing setup and healthcheck leave the step to its agent', async () => {
    const row = await run(setupTask('#!/bin/bash\ntouch /app/ready\n', '[steps.healthcheck]\ncommand = "test -f /app/ready"\ninterval_sec = 0.2\n'));
    expect(row).toMatchObject({ reward: 1, mask_sample: false });
    expect(row.turns).toHaveLength(3);
    await noContainersLeft(`berth.workflow=${row.workflow_id}`);
  });
});
