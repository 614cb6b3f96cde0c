// Issue 24, Harbor's habits: `berth run` takes Harbor's short flags, and `berth report`/`berth view` read a job
// directory that Harbor itself wrote (a real `harbor run` of the oracle), so the two runs sit side by side.
import { afterAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { reportCommand, viewCommand } from '../../src/cli/report.ts';
import { berth } from '../helpers/cli.ts';
import { harborEnv, harborVenv, readWithHarbor } from '../helpers/harbor.ts';
import { writeDataset } from '../helpers/tasks.ts';

const run = promisify(execFile);

describe('`berth run` with Harbor\'s short flags (-p -a -k -n -o)', () => {
  it('-o DIR puts the batch in DIR/<batch id>, a job directory with -k attempts of each task', async () => {
    const jobs = mkdtempSync(join(tmpdir(), 'berth-jobs-'));
    const r = await berth(['run', '-p', 'examples/hello', '-a', 'oracle', '-k', '2', '-n', '2', '-o', jobs, '--json']);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { batch_id: string; results: string; rows: Array<{ reward: number }> };
    expect(out.results).toBe(join(jobs, out.batch_id));
    expect(out.rows.map((x) => x.reward)).toEqual([1, 1]);
    const read = await readWithHarbor(out.results);
    expect(read.errors).toEqual([]);
    expect(read).toMatchObject({ job_name: out.batch_id, n_attempts: 2, n_total_trials: 2 });
    expect(read.trials.map((t) => t.rewards)).toEqual([{ reward: 1 }, { reward: 1 }]);
  }, 240_000);

  it('a dataset given twice, or -o beside --results, is refused naming the fix', async () => {
    const two = await berth(['run', 'examples/hello', '-p', 'examples/compose-hello']);
    expect(two.code).toBe(1);
    expect(two.stderr).toContain('Two datasets: examples/hello and -p examples/compose-hello');
    const both = await berth(['run', '-p', 'examples/hello', '-o', '/tmp/x', '--results', '/tmp/y']);
    expect(both.code).toBe(1);
    expect(both.stderr).toContain('not both');
  });
});

describe('`berth report` and `berth view` of a job directory Harbor wrote', () => {
  let close: (() => Promise<void>) | undefined;
  afterAll(async () => { await close?.(); });

  it('a real `harbor run -a oracle -k 2` reads as two scored episodes of reward 1', async () => {
    // No workdir: Harbor's Docker environment does not make one in a prebuilt image, as Berth does.
    const ds = writeDataset({
      'greet/task.toml': '[environment]\ndocker_image = "berth-base:bookworm"\n[agent]\ntimeout_sec = 60\n[verifier]\ntimeout_sec = 60\n',
      'greet/instruction.md': 'Write hello to /tmp/greeting\n',
      'greet/solution/solve.sh': '#!/bin/bash\necho hello > /tmp/greeting\n',
      'greet/tests/test.sh': '#!/bin/bash\nif grep -q hello /tmp/greeting; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi\n',
    });
    const jobs = mkdtempSync(join(tmpdir(), 'harbor-jobs-'));
    await run(join(harborVenv(), 'bin', 'harbor'), ['run', '-p', ds, '-a', 'oracle', '-k', '2', '-n', '1', '-o', jobs, '--job-name', 'harbor-made'], { env: harborEnv(), timeout: 300_000 });
    const jobDir = join(jobs, 'harbor-made');
    const trials = readdirSync(jobDir).filter((n) => n.startsWith('greet__'));
    expect(trials).toHaveLength(2);

    const page = readFileSync(await reportCommand(jobDir, {}), 'utf8');
    expect(page).toContain('Batch harbor-made');
    expect(page).toMatch(/dataset <b>berth-dataset-[^<]+<\/b> · agent <b>oracle<\/b>/);
    expect(page).toMatch(/id="card-episodes"><div class="k">episodes<\/div><div class="v">2</);
    expect(page).toMatch(/id="card-mean"><div class="k">mean reward<\/div><div class="v">1(\.000)?</);

    const served = await viewCommand(jobDir, {});
    close = () => served.close();
    const index = await (await fetch(served.url)).text();
    const episode = /href="(episodes\/[^"]+)"/.exec(index)?.[1];
    expect(episode).toBeDefined();
    const detail = await (await fetch(`${served.url}${episode}`)).text();
    // The trial's own files: Harbor keeps a single-step trial's verifier/ at its root.
    expect(detail).toContain('reward.txt');
  }, 360_000);
});
