// A results folder as a Harbor job directory on disk: config.json (with the batch's JobMeta under `berth`),
// result.json, and one folder per episode attempt. Every JSON file is written whole (temporary file, then rename), so
// a client or worker killed midway never leaves half a file for Harbor's models to read.
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ResultRow } from '../../workflows/types.ts';
import { jobConfigOf, jobResultOf, type JobProgress } from './job.ts';
import type { JobMeta } from './job-meta.ts';
import { placeTrialFiles, type TrialFiles } from './trial-files.ts';
import { trialResultOf, trialConfigOf, type AttemptTimes } from './trial.ts';
import type { HarborJobConfig, HarborJobResult, HarborTrialResult } from './types.ts';

export function writeJsonWhole(path: string, value: unknown): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(value, null, 2)}\n`);
  renameSync(tmp, path);
}

function readJson<T>(path: string): T | null {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as T;
  } catch {
    return null;
  }
}

/** trial.log: what the episode was and how it ended, in a few lines (Berth's worker logs stay on the host). */
function trialLog(row: ResultRow, t: HarborTrialResult): string {
  return [
    `trial ${t.trial_name}: Berth episode ${row.workflow_id} (run ${row.run_id}), task ${row.task_id}, repeat ${row.repeat}, attempt ${row.attempt}`,
    `host ${row.host ?? 'unknown'}; started ${t.started_at ?? 'unknown'}, finished ${t.finished_at ?? 'unknown'}`,
    ...(row.regraded_from ? [`a regrade of ${row.regraded_from}: verification again, no agent`] : []),
    ...row.turns.map((turn, i) => `turn ${i + 1} (${turn.step}): reward ${turn.reward ?? '-'}${turn.failure_kind ? `, ${turn.failure_kind}` : ''}`),
    row.mask_sample ? `masked: ${row.failure_kind}: ${row.failure_reason ?? ''}` : `reward ${row.reward}${row.failure_kind ? ` (${row.failure_kind}: ${row.failure_reason ?? ''})` : ''}`,
    `timings (s): ${Object.entries(row.timings).map(([k, v]) => `${k} ${v.toFixed(2)}`).join(', ')}`,
    `files: ${t.berth.files}`,
    '',
  ].join('\n');
}

export class HarborJobDir {
  constructor(readonly dir: string) {}

  get configPath(): string { return join(this.dir, 'config.json'); }
  get resultPath(): string { return join(this.dir, 'result.json'); }

  /** The batch as Berth wrote it into config.json, or null when this folder is not (yet) a Berth job. */
  readMeta(): JobMeta | null {
    const config = readJson<HarborJobConfig & { berth?: { meta?: JobMeta } }>(this.configPath);
    return config?.berth?.meta ?? null;
  }

  writeConfig(meta: JobMeta): void {
    mkdirSync(this.dir, { recursive: true });
    const config = jobConfigOf(meta);
    writeJsonWhole(this.configPath, { ...config, berth: { ...config.berth, meta } });
  }

  /** Every trial Berth wrote here (folders whose result.json has Berth's keys). */
  readTrials(): HarborTrialResult[] {
    if (!existsSync(this.dir)) return [];
    return readdirSync(this.dir, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => readJson<HarborTrialResult>(join(this.dir, d.name, 'result.json')))
      .filter((t): t is HarborTrialResult => t !== null && typeof t.berth?.workflow_id === 'string');
  }

  /** The trial folder of a row: its files first, then config.json, trial.log and last result.json. */
  async writeTrial(row: ResultRow, meta: JobMeta, times: AttemptTimes, files: TrialFiles, filesNote?: (placed: string) => string): Promise<HarborTrialResult> {
    const name = trialConfigOf(row, meta).trial_name;
    const trialDir = join(this.dir, name);
    const placed = await placeTrialFiles(files, trialDir);
    const result = trialResultOf(row, meta, times, filesNote ? filesNote(placed) : placed);
    writeJsonWhole(join(trialDir, 'config.json'), result.config);
    writeFileSync(join(trialDir, 'trial.log'), trialLog(row, result));
    writeJsonWhole(join(trialDir, 'result.json'), result);
    return result;
  }

  writeResult(meta: JobMeta, trials: readonly HarborTrialResult[], progress: JobProgress): HarborJobResult {
    const result = jobResultOf(meta, trials, progress);
    mkdirSync(this.dir, { recursive: true });
    writeJsonWhole(this.resultPath, result);
    return result;
  }
}
