// `npm run bench -- job-dir [--rows 5000]`: a batch's Harbor job directory kept while its rows arrive (JobRecorder:
// each row's trial folder, result.json kept current), against the floor of writing the same trial folders with plain
// fs calls and result.json once, measured in the same run. Rows arrive back to back, as when a big batch is collected
// (`berth collect`, or `wait` after `rows`), the client's worst case; the Temporal server is the real dev server.
import { Client, Connection } from '@temporalio/client';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_EPISODE_SETTINGS } from '../src/activities/types.ts';
import { batchWorkflowId } from '../src/client/episodes.ts';
import { HarborJobDir, writeJsonWhole } from '../src/client/harbor-job/job-dir.ts';
import { JobRecorder } from '../src/client/harbor-job/recorder.ts';
import { ensureServer } from '../src/server/devserver.ts';
import type { BatchInput, ResultRow } from '../src/workflows/types.ts';

const TASKS = 500;

function rowOf(batchId: string, i: number, logsDir: string): ResultRow {
  const task = `task-${String(i % TASKS).padStart(4, '0')}`;
  const repeat = Math.floor(i / TASKS) + 1;
  const reward = i % 3 === 0 ? 0 : 1;
  return {
    task_id: task, repeat, attempt: 1, reward, verifier_rewards: { reward }, failure_kind: null, failure_reason: null, mask_sample: false,
    turns: [{ step: task, reward, verifier_rewards: { reward }, failure_kind: null }], stopped_after_turn: null,
    response: { output: [] }, response_text: 'done', verifier_mode: 'shared', digest: 'sha256:x', timings: { seed: 0.3, agent: 0.1, verify: 0.1 },
    workflow_id: `berth/${batchId}/${task}/${repeat}`, run_id: `run-${i}`, host: 'bench', logs_dir: logsDir,
  };
}

/** An episode's files as a trivial one leaves them: the agent's and the verifier's output, the reward. */
function episodeFiles(root: string): string {
  const dir = join(root, 'episode');
  for (const [rel, text] of Object.entries({ 'turn-1/agent/oracle.txt': 'hello\n', 'turn-1/verifier/test-stdout.txt': 'ok\n', 'turn-1/verifier/reward.txt': '1\n' })) {
    mkdirSync(join(dir, rel, '..'), { recursive: true });
    writeFileSync(join(dir, rel), text);
  }
  return dir;
}

export default async function jobDirBench(args: string[]): Promise<void> {
  const rows = Number(args[args.indexOf('--rows') + 1] || 5000);
  const root = mkdtempSync(join(tmpdir(), 'berth-bench-jobdir-'));
  const logsDir = episodeFiles(root);
  const server = await ensureServer();
  const client = new Client({ connection: await Connection.connect({ address: server.address }) });
  const batchId = `bench-jobdir-${Date.now().toString(36)}`;
  const input: BatchInput = {
    batchId, datasetName: 'bench', datasetPath: root, agent: 'oracle', agentArgs: {}, imageAliases: {}, episodeSettings: DEFAULT_EPISODE_SETTINGS,
    tasks: Array.from({ length: TASKS }, (_, i) => ({ taskId: `task-${String(i).padStart(4, '0')}`, taskPath: join(root, `task-${i}`), digest: 'sha256:x' })),
    repeats: Math.ceil(rows / TASKS), concurrency: 8,
  };
  // The recorder reads the batch's start time: a batch workflow that no worker runs (its queue has none).
  const batch = await client.workflow.start('batchWorkflow', { taskQueue: `${batchId}-nobody`, workflowId: batchWorkflowId(batchId), args: [input] });
  const all = Array.from({ length: rows }, (_, i) => rowOf(batchId, i, logsDir));

  let resultWrites = 0;
  let resultMs = 0;
  const writeResult = HarborJobDir.prototype.writeResult;
  HarborJobDir.prototype.writeResult = function counted(this: HarborJobDir, ...a: Parameters<typeof writeResult>) {
    resultWrites++;
    const began = performance.now();
    try {
      return writeResult.apply(this, a);
    } finally {
      resultMs += performance.now() - began;
    }
  };
  const berthDir = join(root, 'berth');
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const recorder = await JobRecorder.open(client, batchId, berthDir, input);
  for (const row of all) await recorder.record(row);
  await recorder.finish(0);
  const berthMs = performance.now() - t0;
  const berthCpu = process.cpuUsage(cpu0);
  HarborJobDir.prototype.writeResult = writeResult;
  await batch.terminate('benchmark done');

  // The floor: the same trial folders (the episode's files copied, config.json, trial.log, result.json) and the job's
  // result.json once, with plain fs calls; the JSON written is Berth's own, read back beforehand.
  const names = readFileSync(join(berthDir, 'result.json'), 'utf8');
  const trialNames = (JSON.parse(names) as { berth: { reported_trials: string[] } }).berth.reported_trials;
  const sample = trialNames[0]!;
  const trialFiles = ['config.json', 'trial.log', 'result.json'].map((f) => [f, readFileSync(join(berthDir, sample, f), 'utf8')] as const);
  const floorDir = join(root, 'floor');
  const cpu1 = process.cpuUsage();
  const t1 = performance.now();
  for (const name of trialNames) {
    const dir = join(floorDir, name);
    mkdirSync(dir, { recursive: true });
    cpSync(logsDir, dir, { recursive: true });
    for (const [f, text] of trialFiles) writeFileSync(join(dir, f), text);
  }
  writeJsonWhole(join(floorDir, 'result.json'), JSON.parse(names));
  const floorMs = performance.now() - t1;
  const floorCpu = process.cpuUsage(cpu1);

  const cpuSec = (c: NodeJS.CpuUsage) => (c.user + c.system) / 1e6;
  console.log(`job directory for ${rows} rows (${trialNames.length} trials), rows back to back:`);
  console.log(`  Berth (JobRecorder)  ${(berthMs / 1000).toFixed(2)} s  ${cpuSec(berthCpu).toFixed(2)} CPU-s  ${(berthMs / rows).toFixed(2)} ms/row  result.json written ${resultWrites} times (${(resultMs / 1000).toFixed(2)} s)`);
  console.log(`  floor (plain fs)     ${(floorMs / 1000).toFixed(2)} s  ${cpuSec(floorCpu).toFixed(2)} CPU-s  ${(floorMs / rows).toFixed(2)} ms/row  result.json written once`);
  console.log(`  ratio                ${(berthMs / floorMs).toFixed(2)} (time), ${(cpuSec(berthCpu) / cpuSec(floorCpu)).toFixed(2)} (CPU)`);
  rmSync(root, { recursive: true, force: true });
}
