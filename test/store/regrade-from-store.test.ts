// Issue 39: a regrade outlives the host that ran the attempt. A batch with [results] store set runs on two hosts (two
// Docker engines, two BERTH_HOMEs neither worker can see the other's): host A runs the first two episodes, then it and
// its engine are killed after those episodes closed, and host B runs the rest. `berth regrade` on a machine that sees
// neither BERTH_HOME regrades A's separate-mode attempt on B from the store (its agent's files and the artifacts its
// verification collected, byte for byte what A wrote), and lists A's shared-mode attempt with why it cannot (its kept
// final state was an image on A's engine); B's own attempts are regraded as they always were.
import { describe, expect, it } from 'vitest';
import { Client } from '@temporalio/client';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBatch } from '../../src/client/batch.ts';
import { listEpisodes } from '../../src/client/episodes.ts';
import { trialName } from '../../src/client/harbor-job/names.ts';
import { hostPollers } from '../../src/config/pollers.ts';
import { filesUnder } from '../../src/store/index.ts';
import type { ResultRow } from '../../src/workflows/types.ts';
import { berth } from '../helpers/cli.ts';
import { recordHistory } from '../helpers/histories.ts';
import { testHostQueue } from '../helpers/host-slots.ts';
import { ADDRESS, storeOnTwoHosts } from '../helpers/store-hosts.ts';
import { BASE_TOML, writeDataset } from '../helpers/tasks.ts';
import { startWorkerProcess, waitUntil } from '../helpers/worker-process.ts';

const BASE = 'berth-base:bookworm';
const sha = (path: string): string => createHash('sha256').update(readFileSync(path)).digest('hex');
const rewardIf = (cond: string, yes: string) => `#!/bin/bash\nif ${cond}; then echo ${yes} > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi\necho "graded by the ${yes} verifier"\n`;
const SEPARATE_TOML = [
  'artifacts = ["/app/out.txt"]',
  '[environment]', `docker_image = "${BASE}"`, 'workdir = "/app"',
  '[agent]', 'timeout_sec = 60',
  '[verifier]', 'timeout_sec = 60', 'environment_mode = "separate"',
  '[verifier.environment]', `docker_image = "${BASE}"`,
].join('\n');

/** a-sep and c-sep verify in a separate environment from collected artifacts; b-shr and d-shr in the agent's sandbox. */
function dataset(): string {
  const files: Record<string, string> = {};
  for (const id of ['a-sep', 'c-sep']) {
    files[`${id}/task.toml`] = SEPARATE_TOML;
    files[`${id}/instruction.md`] = 'write ok\n';
    files[`${id}/solution/solve.sh`] = `#!/bin/bash\nsleep 4\necho ok > /app/out.txt\necho "note of ${id} $RANDOM" > /logs/artifacts/note.txt\n`;
    files[`${id}/tests/test.sh`] = rewardIf('grep -q ok /app/out.txt', '1');
  }
  for (const id of ['b-shr', 'd-shr']) {
    files[`${id}/task.toml`] = BASE_TOML;
    files[`${id}/instruction.md`] = 'write ok\n';
    files[`${id}/solution/solve.sh`] = '#!/bin/bash\nsleep 4\necho ok > /app/out.txt\n';
    files[`${id}/tests/test.sh`] = rewardIf('grep -q ok /app/out.txt', '1');
  }
  return writeDataset(files);
}

/** sha256 of every file under `dir`'s agent/ and artifacts/ (what a regrade copies), by path relative to `dir`. */
function copiedFiles(turnDir: string): Map<string, string> {
  return new Map(filesUnder(turnDir).filter((p) => /^(agent|artifacts)\//.test(p)).map((p) => [p, sha(join(turnDir, p))]));
}

describe('berth regrade on another host, from the results store', () => {
  const h = storeOnTwoHosts('i39-regrade', 'regrade');
  const { suffix, homes, env, workers } = h;

  it("regrades a gone host's separate-mode attempt from the store, and says why not for its shared-mode one", async () => {
    const client = new Client({ connection: h.connection! });
    const engineA = h.engines!.engines[0]!;
    const [queueA, queueB] = [await testHostQueue(suffix, engineA.docker), await testHostQueue(suffix)];
    const polled = (q: string) => waitUntil(async () => (await hostPollers(ADDRESS, 'default', q)).length > 0, 120_000, `a worker polling ${q}`)
      .catch((err: Error) => { throw new Error(`${err.message}\n${workers.map((w) => w.output()).join('\n---\n')}`); });

    // Host A alone takes the first two episodes (one of each mode); the batch is paused so it takes no more.
    const workerA = startWorkerProcess({ ...env, BERTH_HOME: homes[0]!, BERTH_HOST_NAME: 'host-a', DOCKER_HOST: engineA.dockerHost }, { hidden: [homes[1]!] });
    workers.push(workerA);
    await polled(queueA);
    const root = dataset();
    const handle = await startBatch({ dataset: root, concurrency: 2, keepFinalState: true, taskQueue: env.BERTH_TASK_QUEUE, client,
      resultsDir: join(mkdtempSync(join(tmpdir(), 'berth-jobs-')), 'first') });
    await waitUntil(async () => (await listEpisodes(client, handle.batchId)).length === 2, 60_000, 'the first two episodes started');
    await handle.pause();
    await waitUntil(async () => (await listEpisodes(client, handle.batchId)).filter((e) => e.status === 'COMPLETED').length === 2, 180_000, 'the first two episodes closed');

    // Host B comes up; host A's worker and engine are killed; the rest of the batch runs on B.
    workers.push(startWorkerProcess({ ...env, BERTH_HOME: homes[1]!, BERTH_HOST_NAME: 'host-b' }, { hidden: [homes[0]!] }));
    await polled(queueB);
    workerA.kill9();
    engineA.kill();
    await handle.resume();
    await client.workflow.getHandle(`berth/${handle.batchId}`).result();
    const firstRows = Object.fromEntries(await Promise.all((await listEpisodes(client, handle.batchId)).map(async (e) =>
      [e.taskId, await client.workflow.getHandle(e.workflowId).result() as ResultRow] as const)));
    expect(Object.fromEntries(Object.entries(firstRows).map(([t, r]) => [t, [r.host, r.reward, r.verifier_mode]]))).toEqual({
      'a-sep': ['host-a', 1, 'separate'], 'b-shr': ['host-a', 1, 'shared'], 'c-sep': ['host-b', 1, 'separate'], 'd-shr': ['host-b', 1, 'shared'],
    });
    for (const r of Object.values(firstRows)) expect(r.store_key, r.store_error).toBeTruthy();
    // What host A wrote of its separate-mode attempt (read here, where its disk is visible; no worker of it sees it).
    const writtenByA = copiedFiles(join(firstRows['a-sep']!.logs_dir!, 'turn-1'));
    expect([...writtenByA.keys()]).toEqual(expect.arrayContaining(['agent/trajectory.json', 'artifacts/note.txt']));

    // A verifier fixed after the batch: new test.sh files, which also read the collected artifact.
    for (const id of ['a-sep', 'c-sep']) writeFileSync(join(root, id, 'tests/test.sh'), rewardIf('grep -q ok /app/out.txt && grep -q "note of" /logs/artifacts/note.txt', '0.75'));
    for (const id of ['b-shr', 'd-shr']) writeFileSync(join(root, id, 'tests/test.sh'), rewardIf('grep -q ok /app/out.txt', '0.25'));

    // Host A is gone for Temporal too once its last poll is older than a minute.
    await waitUntil(async () => (await hostPollers(ADDRESS, 'default', queueA)).length === 0, 150_000, `no worker polling ${queueA}`);
    const resultsDir = join(mkdtempSync(join(tmpdir(), 'berth-jobs-')), 'regraded');
    const cli = await berth(['regrade', handle.batchId, '--results', resultsDir, '--json'], env, 300_000, undefined, homes);
    expect(cli.code, cli.stderr).toBe(0);
    const out = JSON.parse(cli.stdout) as { skipped: Array<{ workflowId: string; reason: string }>; failed: unknown[]; rows: ResultRow[] };
    expect(out.failed).toEqual([]);
    // A's shared-mode attempt: its kept final state was an image on A's engine.
    expect(out.skipped.map((s) => s.workflowId)).toEqual([`berth/${handle.batchId}/b-shr/1`]);
    expect(out.skipped[0]!.reason).toContain('--keep-final-state');
    expect(out.skipped[0]!.reason).toContain('host-a');
    expect(out.skipped[0]!.reason).toContain('no worker of that host is running');
    const regraded = Object.fromEntries(out.rows.map((r) => [r.task_id, r]));
    expect(Object.fromEntries(Object.entries(regraded).map(([t, r]) => [t, [r.attempt, r.reward, r.host, r.regraded_from ?? null]]))).toEqual({
      'a-sep': [2, 0.75, 'host-b', firstRows['a-sep']!.workflow_id],
      'b-shr': [1, 1, 'host-a', null],
      'c-sep': [2, 0.75, 'host-b', firstRows['c-sep']!.workflow_id],
      'd-shr': [2, 0.25, 'host-b', firstRows['d-shr']!.workflow_id],
    });
    // The regrade on B copied A's files from the store byte for byte, and its new verifier graded them.
    const regradeTurn = join(regraded['a-sep']!.logs_dir!, 'turn-1');
    expect(regraded['a-sep']!.logs_dir!.startsWith(homes[1]!)).toBe(true);
    const copied = copiedFiles(regradeTurn);
    for (const [path, digest] of writtenByA) expect(copied.get(path), path).toBe(digest);
    expect(readFileSync(join(regradeTurn, 'verifier', 'test-stdout.txt'), 'utf8')).toContain('graded by the 0.75 verifier');
    // The regrade of A's attempt asked a live worker for its host first; B's own were regraded where they ran.
    const activitiesOf = async (id: string) => (await client.workflow.getHandle(id).fetchHistory()).events!
      .map((e) => e.activityTaskScheduledEventAttributes).filter((a) => a).map((a) => `${a!.activityType!.name}@${a!.taskQueue!.name}`);
    // Each regrade's own files went to the store from the host that ran it, as an episode's do.
    expect(await activitiesOf(regraded['a-sep']!.workflow_id)).toEqual([`planRegrade@${env.BERTH_TASK_QUEUE}`, `hostLease@${env.BERTH_TASK_QUEUE}`, `regradeTurn@${queueB}`, `storeEpisodeFiles@${queueB}`]);
    expect(await activitiesOf(regraded['c-sep']!.workflow_id)).toEqual([`planRegrade@${env.BERTH_TASK_QUEUE}`, `regradeTurn@${queueB}`, `storeEpisodeFiles@${queueB}`]);
    for (const t of ['a-sep', 'c-sep', 'd-shr']) expect(regraded[t]!.store_key, regraded[t]!.store_error).toMatch(new RegExp(`^regrade-${suffix}/`));
    await recordHistory(client, regraded['a-sep']!.workflow_id, 'regrade-from-store');
    // The results folder the command rewrote, where neither BERTH_HOME is visible: every attempt's trial (the four
    // graded ones and the three regrades) read from the store, the regrade of A's attempt with A's files.
    const trials = [...Object.values(firstRows), ...['a-sep', 'c-sep', 'd-shr'].map((t) => regraded[t]!)];
    for (const row of trials) {
      const trial = join(resultsDir, trialName(row.task_id, row.workflow_id));
      const berthKeys = (JSON.parse(readFileSync(join(trial, 'result.json'), 'utf8')) as { berth: { files: string } }).berth;
      expect(berthKeys.files, trial).toMatch(/^read from the results store \(s3:\/\//);
    }
    const regradeTrial = join(resultsDir, trialName('a-sep', regraded['a-sep']!.workflow_id));
    for (const [path, digest] of writtenByA) expect(sha(join(regradeTrial, path)), path).toBe(digest);

    // Only A's shared-mode attempt asked: nothing regraded, the command exits 1, and no attempt number is taken.
    const again = await berth(['regrade', handle.batchId, '--task', 'b-shr', '--results', resultsDir], env, 300_000, undefined, homes);
    expect(again.code).toBe(1);
    expect(again.stdout).toContain(`not regraded berth/${handle.batchId}/b-shr/1: `);
    expect(again.stdout).toContain('no worker of that host is running');
    expect(again.stderr).toContain('nothing regraded');
    expect((await listEpisodes(client, handle.batchId)).filter((e) => e.taskId === 'b-shr').map((e) => e.attempt)).toEqual([1]);
    for await (const wf of client.workflow.list({ query: `WorkflowType = "regradeCheckWorkflow" AND TaskQueue = "${env.BERTH_TASK_QUEUE}"` })) {
      const history = await client.workflow.getHandle(wf.workflowId).fetchHistory();
      if (!history.events!.some((e) => e.markerRecordedEventAttributes)) continue;
      await recordHistory(client, wf.workflowId, 'regrade-check-from-store');
      break;
    }
    // d-shr's kept state is an image on this machine's engine (host B's).
    const gc = await berth(['gc', '--batch', handle.batchId, '--json'], env);
    expect(gc.code, gc.stderr).toBe(0);
  }, 900_000);
});
