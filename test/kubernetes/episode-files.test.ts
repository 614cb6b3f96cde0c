import type { Client } from '@temporalio/client';
import Docker from 'dockerode';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBatch } from '../../src/client/batch.ts';
import { hostQueueOf } from '../../src/client/episodes.ts';
import { fetchHostFolder } from '../../src/client/host-files.ts';
import { sandboxSharedQueue } from '../../src/config/queues.ts';
import { DockerSandboxProvider, KubernetesSandboxProvider } from '../../src/sandbox/index.ts';
import type { ResultRow, SandboxRef } from '../../src/workflows/types.ts';
import { bashCall, finalMessage, startScriptedServer } from '../agents/scripted-openai.ts';
import { berth, repoRoot } from '../helpers/cli.ts';
import { inEpisodePod, kubernetesConfigFile, ownNamespace, type OwnNamespace } from '../helpers/kubernetes-namespace.ts';
import { FIRST_BUILD_TIMEOUT_MS, useLocalCluster, type LocalCluster } from '../helpers/kubernetes.ts';
import { echoTask, writeDataset } from '../helpers/tasks.ts';
import { ownWorkerQueues, waitUntil, type WorkerProcess } from '../helpers/worker-process.ts';

// Two `berth worker` processes on one cluster queue, each with a BERTH_HOME of its own: two machines that share no
// storage (issue 23, "No shared filesystem anywhere": the openai agent's conversation and every episode's logs reach
// the worker that needs them without a shared folder; docs/kubernetes.md, Episode files without shared storage).
// Temporal hands each activity to either worker; the worker that seeded an episode keeps its files, the other works on
// a copy brought from it and sends it back, and the client (this process, a third BERTH_HOME) gets them all from the
// keeper.

const STEPS = ['s1', 's2', 's3'];
const REPEATS = 3;
/** Each step's agent writes a marker its verifier checks and prints, so every step leaves files on both sides. */
const threeSteps = () => writeDataset({
  'three/task.toml': `[environment]\ndocker_image = "berth-base:bookworm"\nworkdir = "/app"\n${STEPS.map((s) => `[[steps]]\nname = "${s}"\n[steps.agent]\ntimeout_sec = 120\n[steps.verifier]\ntimeout_sec = 60\n`).join('')}`,
  ...Object.fromEntries(STEPS.flatMap((s) => [
    [`three/steps/${s}/instruction.md`, `Step ${s}\n`],
    [`three/steps/${s}/solution/solve.sh`, `#!/bin/bash\necho ${s}-done > /app/${s}\necho agent-of-${s}\n`],
    [`three/steps/${s}/tests/test.sh`, `#!/bin/bash\necho "verifier-of-${s}: $(cat /app/${s})"\n[ "$(cat /app/${s})" = ${s}-done ] && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt\n`],
  ])),
});

type HistoryEvent = NonNullable<Awaited<ReturnType<ReturnType<Client['workflow']['getHandle']>['fetchHistory']>>['events']>[number];

/** Each activity of a workflow: its name, queue and the identity of the worker that ran its last attempt. */
function activitiesOf(events: HistoryEvent[]): Array<{ name: string; queue: string; identity: string }> {
  return events.flatMap((e) => {
    const a = e.activityTaskScheduledEventAttributes;
    if (!a) return [];
    const started = events.find((s) => String(s.activityTaskStartedEventAttributes?.scheduledEventId) === String(e.eventId));
    return [{ name: a.activityType!.name!, queue: a.taskQueue!.name!, identity: started?.activityTaskStartedEventAttributes?.identity ?? '' }];
  });
}

/** The seed's answer in an episode's history: where its files are kept. */
function seededRef(client: Client, events: HistoryEvent[]): SandboxRef {
  const seed = events.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'seed')!;
  const done = events.find((e) => String(e.activityTaskCompletedEventAttributes?.scheduledEventId) === String(seed.eventId))!;
  return client.options.loadedDataConverter.payloadConverter.fromPayload<SandboxRef>(done.activityTaskCompletedEventAttributes!.result!.payloads![0]!);
}

/** The row's logs folder as the client gets it (through the keeper's files queue), unpacked here. */
async function fetchedFiles(client: Client, row: ResultRow, taskQueue: string): Promise<string> {
  const queue = await hostQueueOf(client, row.workflow_id, taskQueue);
  expect(queue).toMatch(/-files-[0-9a-f]{12}$/);
  const got = await fetchHostFolder(client, { queue: queue!, taskQueue, dir: row.logs_dir! });
  if (!Buffer.isBuffer(got)) throw new Error(got.missing);
  const dir = mkdtempSync(join(tmpdir(), 'berth-k8s-files-got-'));
  execFileSync('tar', ['-C', dir, '-xf', '-'], { input: got });
  return dir;
}

describe('episode files on a cluster queue whose workers share no storage', () => {
  let cluster: LocalCluster;
  let ns: OwnNamespace;
  let client: Client;
  const own = ownWorkerQueues('k8s-files');
  const taskQueue = sandboxSharedQueue(own.env.BERTH_TASK_QUEUE, 'kubernetes');
  const homes = [mkdtempSync(join(tmpdir(), 'berth-home-a-')), mkdtempSync(join(tmpdir(), 'berth-home-b-'))];
  const workers: WorkerProcess[] = [];
  const KEY = 'sk-test-k8s-files-5d1e';

  beforeAll(async () => {
    cluster = await useLocalCluster();
    ns = await ownNamespace(cluster.core, 'files');
    Object.assign(own.env, { BERTH_CONFIG: kubernetesConfigFile(cluster, ns.name, 6), BERTH_TEST_FILES_OPENAI_KEY: KEY });
    // Each worker sees its own BERTH_HOME and not the other's, as on two machines.
    for (const home of homes) workers.push(own.startWorker({ BERTH_HOME: home }, { hidden: homes.filter((h) => h !== home) }));
    for (const w of workers) await waitUntil(() => /episode files on \S+-files-[0-9a-f]{12}/.test(w.output()), 120_000, `a worker's files queue\n${w.output()}`);
    client = await own.client();
  }, FIRST_BUILD_TIMEOUT_MS);
  afterAll(async () => {
    await own.stop();
    await ns?.remove();
    await cluster?.release();
  }, 180_000);

  it('a three-step task: every step\'s agent and verifier files reach the keeper and the client, whichever worker ran them', async () => {
    const resultsDir = mkdtempSync(join(tmpdir(), 'berth-k8s-files-'));
    const handle = await startBatch({ dataset: threeSteps(), repeats: REPEATS, concurrency: REPEATS, resultsDir, taskQueue, client });
    await client.workflow.getHandle(`berth/${handle.batchId}`).result();
    // Collected by `berth results` on a third machine: it sees neither worker's BERTH_HOME.
    const r = await berth(['results', handle.batchId, '--results', resultsDir, '--json'], own.env, 180_000, repoRoot, homes);
    expect(r.code, r.stderr).toBe(0);
    const rows = (JSON.parse(r.stdout) as { rows: ResultRow[] }).rows;
    await handle.close();
    expect(rows).toHaveLength(REPEATS);
    let crossed = 0;
    for (const row of rows) {
      expect(row, row.failure_reason ?? '').toMatchObject({ reward: 1, mask_sample: false });
      expect(row.turns.map((t) => t.reward)).toEqual([1, 1, 1]);
      const events = (await client.workflow.getHandle(row.workflow_id).fetchHistory()).events ?? [];
      const acts = activitiesOf(events);
      const seeder = acts.find((a) => a.name === 'seed')!.identity;
      const ref = seededRef(client, events);
      // The keeper is the worker that seeded: the row's folder is under its BERTH_HOME, and the other holds no copy.
      const keeper = homes.find((h) => row.logs_dir!.startsWith(join(h, 'episodes')));
      expect(keeper, `${row.logs_dir} under one of ${homes.join(', ')}`).toBeDefined();
      const other = homes.find((h) => h !== keeper)!;
      expect(ref.filesQueue).toMatch(/-files-[0-9a-f]{12}$/);
      expect(existsSync(join(other, 'episodes', row.logs_dir!.split('/').slice(-2).join('/')))).toBe(false);
      if (acts.some((a) => ['agentTurn', 'verifyTurn'].includes(a.name) && a.identity !== seeder)) crossed++;

      const got = await fetchedFiles(client, row, taskQueue);
      for (const s of STEPS) {
        expect(readFileSync(join(got, 'steps', s, 'verifier', 'reward.txt'), 'utf8').trim()).toBe('1');
        expect(readFileSync(join(got, 'steps', s, 'verifier', 'test-stdout.txt'), 'utf8')).toContain(`verifier-of-${s}: ${s}-done`);
        expect(readdirSync(join(got, 'steps', s, 'agent'))).toEqual(expect.arrayContaining(['trajectory.json']));
        expect(readFileSync(join(got, 'steps', s, 'agent', 'oracle.txt'), 'utf8')).toContain(`agent-of-${s}`);
      }
    }
    // The results folder is a Harbor job directory whose trials hold the files, moved from the keeper.
    const trials = readdirSync(resultsDir).filter((n) => n.startsWith('three__') && existsSync(join(resultsDir, n, 'result.json')));
    expect(trials).toHaveLength(REPEATS);
    for (const t of trials) {
      const berth = (JSON.parse(readFileSync(join(resultsDir, t, 'result.json'), 'utf8')) as { berth: { files: string } }).berth;
      expect(berth.files).toMatch(/^moved from the host that ran it \(\d+ bytes\) through queue \S+-files-[0-9a-f]{12}$/);
      for (const s of STEPS) expect(readFileSync(join(resultsDir, t, 'steps', s, 'verifier', 'reward.txt'), 'utf8').trim()).toBe('1');
    }
    // Both workers ran the batch's turns: at least one episode's agent turn or verification ran on the worker that
    // did not seed it (each of the 18 went to either, as Temporal chose), so the files crossed between them.
    expect(crossed).toBeGreaterThan(0);
    // No file was kept back: every keeper answered.
    for (const w of workers) expect(w.output()).not.toContain('did not answer');
  }, 900_000);

  it('an openai turn: its conversation stays with the keeper, every model and bash call runs there, and the client gets it', async () => {
    const server = await startScriptedServer([bashCall('call_1', 'echo ok > /app/out.txt'), finalMessage('done: wrote out.txt')]);
    try {
      const handle = await startBatch({
        dataset: writeDataset(echoTask('write-ok')), agent: 'openai', resultsDir: mkdtempSync(join(tmpdir(), 'berth-k8s-files-openai-')),
        agentArgs: { base_url: server.baseUrl, model: 'scripted-model', api_key_env: 'BERTH_TEST_FILES_OPENAI_KEY' }, taskQueue, client,
      });
      const row = (await handle.wait()).rows[0]!;
      expect(row, row.failure_reason ?? '').toMatchObject({ reward: 1, mask_sample: false, response_text: 'done: wrote out.txt' });
      expect(row.usage).toMatchObject({ calls: 2 });
      const ref = seededRef(client, (await client.workflow.getHandle(row.workflow_id).fetchHistory()).events ?? []);
      const turn = activitiesOf((await client.workflow.getHandle(`${row.workflow_id}/turn-1`).fetchHistory()).events ?? []);
      expect(turn.map((a) => a.name)).toEqual(['openaiStart', 'openaiTurn']);
      expect(new Set(turn.map((a) => a.queue))).toEqual(new Set([ref.filesQueue]));
      const got = await fetchedFiles(client, row, taskQueue);
      const conversation = readFileSync(join(got, 'turn-1', 'agent', 'conversation.jsonl'), 'utf8');
      expect(conversation).toContain('echo ok > /app/out.txt');
      expect(conversation).not.toContain(KEY);
      expect(readFileSync(join(got, 'turn-1', 'verifier', 'reward.txt'), 'utf8').trim()).toBe('1');
    } finally {
      await server.close();
    }
  }, 600_000);

  it('the keeper killed with -9 mid-turn: the other worker says the keeper is gone, and the episode ends, scored or masked, never wrongly', async () => {
    const slow = writeDataset({
      'slow/task.toml': `[environment]\ndocker_image = "berth-base:bookworm"\nworkdir = "/app"\n${['a', 'b'].map((n) => `[[steps]]\nname = "${n}"\n[steps.agent]\ntimeout_sec = 120\n[steps.verifier]\ntimeout_sec = 60\n`).join('')}`,
      'slow/steps/a/instruction.md': 'a\n',
      'slow/steps/a/solution/solve.sh': '#!/bin/bash\necho a > /app/a\n',
      'slow/steps/a/tests/test.sh': '#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n',
      'slow/steps/b/instruction.md': 'b\n',
      'slow/steps/b/solution/solve.sh': '#!/bin/bash\ntouch /app/started-b\nsleep 15\necho b > /app/b\n',
      'slow/steps/b/tests/test.sh': '#!/bin/bash\n[ "$(cat /app/a /app/b)" = "$(printf \'a\\nb\')" ] && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt\n',
    });
    const handle = await startBatch({ dataset: slow, resultsDir: mkdtempSync(join(tmpdir(), 'berth-k8s-files-kill-')), taskQueue, client });
    const workflowId = `berth/${handle.batchId}/slow/1`;
    const provider = new KubernetesSandboxProvider({ kubeConfig: cluster.kubeConfig, namespace: ns.name, local: new DockerSandboxProvider(new Docker()), registryHost: cluster.registry });
    await waitUntil(() => inEpisodePod(ns, provider, workflowId, '/app/started-b'), 180_000, "step b's agent in its pod");
    const events = (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
    const seeder = activitiesOf(events).find((a) => a.name === 'seed')!.identity;
    const keeper = workers.find((w) => seeder.startsWith(`${w.child.pid}@`))!;
    const survivor = workers.find((w) => w !== keeper)!;
    keeper.kill9();

    const row = (await handle.wait()).rows[0]!;
    await handle.close();
    // Usually the survivor finishes it (reward 1); in one CI run in three its verification of step b did not find the
    // agent's trajectory and the episode was masked (docs/kubernetes.md, Episode files without shared storage). Never
    // a wrong score, and never a hang.
    if (row.mask_sample) {
      console.log(`MASKED: ${row.failure_reason}\n--- keeper ---\n${keeper.output()}\n--- survivor ---\n${survivor.output()}`);
      expect(row.reward).toBeNull();
    }
    else {
      expect(row, row.failure_reason ?? '').toMatchObject({ reward: 1, failure_kind: null });
      expect(row.turns.map((t) => t.reward)).toEqual([1, 1]);
    }
    expect(survivor.output()).toMatch(/the worker keeping episode files on \S+-files-[0-9a-f]{12} did not answer/);
  }, 600_000);
});
