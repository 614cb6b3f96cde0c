// Harbor 0.25's own oracle on a dataset folder: `harbor run -p DATASET -a oracle`, then each task's reward as
// Harbor's models read the job (trials are named <task folder>__<suffix>).
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { harborEnv, harborVenv, readWithHarbor } from './harbor.ts';

const run = promisify(execFile);

export async function harborOracleRewards(dataset: string, concurrency: number): Promise<Record<string, number | null>> {
  const jobs = mkdtempSync(join(tmpdir(), 'harbor-jobs-'));
  await run(join(harborVenv(), 'bin', 'harbor'), ['run', '-p', dataset, '-a', 'oracle', '-n', String(concurrency), '-o', jobs, '--job-name', 'published'], { env: harborEnv(), timeout: 600_000 });
  const read = await readWithHarbor(join(jobs, 'published'));
  return Object.fromEntries(read.trials.map((t) => [t.name.split('__')[0]!, t.rewards?.reward ?? null]));
}
