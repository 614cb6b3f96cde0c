// A batch's results folder made from the results store alone (docs/deployment.md, A results store): the job's files
// `berth results` wrote there, and each reported row's attempt in its trial folder. Neither Temporal nor any worker is
// asked, so `berth view` and `berth report` work on any machine that can read the bucket.
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { loadBerthConfig } from '../config/berth-config.ts';
import { downloadAttempt, downloadJobFiles, openStore } from '../store/index.ts';
import { trialPathOf } from './harbor-job/layout.ts';
import { trialName } from './harbor-job/names.ts';
import { ResultsFolder } from './results.ts';

export interface FromStore { jobFiles: string[]; trials: number; missing: string[] }

/** Fills `dir` from the store berth.toml names; null when no store is set or it holds no rows of the batch. */
export async function resultsFromStore(batchId: string, dir: string): Promise<FromStore | null> {
  const store = openStore(loadBerthConfig().config);
  if (!store) return null;
  try {
    mkdirSync(dir, { recursive: true });
    const jobFiles = await downloadJobFiles(store, batchId, dir);
    const folder = new ResultsFolder(dir);
    if (!existsSync(folder.rolloutsPath)) return null;
    let trials = 0;
    const missing: string[] = [];
    for (const row of folder.readRows()) {
      if (!row.store_key) { missing.push(row.workflow_id); continue; }
      const got = await downloadAttempt(store, row.store_key, join(dir, trialName(row.task_id, row.workflow_id)), trialPathOf);
      if (got) trials++; else missing.push(row.workflow_id);
    }
    return { jobFiles, trials, missing };
  } finally {
    store.destroy();
  }
}
