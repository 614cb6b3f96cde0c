// Issue 39, job files as the batch changes (docs/deployment.md, A results store; patch batch-job-files-as-it-goes): a
// batch with a store writes its job files to a real SeaweedFS server while it runs, by itself: the client that
// collects its rows writes the job's files to the store only once the batch has closed. An episode that closes early
// is in the store's rollouts.jsonl and result.json (with the others counted running) long before the batch ends; one
// that closes during the 30 s wait after that write is in the next (a third waits until the test has seen both); the
// writes start at least 30 s apart, one at a time, and the last (the finished job) comes after every other. The
// client's own result.json counts the running episodes too.
import Docker from 'dockerode';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startBatch } from '../../src/client/batch.ts';
import { jobFileKey } from '../../src/store/index.ts';
import type { BatchJobFilesRequest } from '../../src/activities/types.ts';
import type { ResultRow } from '../../src/workflows/types.ts';
import { writeDataset } from '../helpers/tasks.ts';
import { useStoreWorker } from '../helpers/store-worker.ts';
import { waitUntil } from '../helpers/worker-process.ts';

const TOML = '[environment]\ndocker_image = "berth-base:bookworm"\nworkdir = "/app"\n[agent]\ntimeout_sec = 240\n[verifier]\ntimeout_sec = 60\n';
/** A task whose oracle sleeps `sec` seconds, then writes ok (its test rewards 1 when it finds it). */
const sleeper = (id: string, sec: number): Record<string, string> => ({
  [`${id}/task.toml`]: TOML,
  [`${id}/instruction.md`]: 'Wait, then write ok to out.txt\n',
  [`${id}/solution/solve.sh`]: `#!/bin/bash\nsleep ${sec}\necho ok > out.txt\n`,
  [`${id}/tests/test.sh`]: '#!/bin/bash\ngrep -q ok /app/out.txt && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt\n',
});

/** A task whose oracle waits (at most 200 s) until the test lets it go (release), then writes ok. */
const held = (): Record<string, string> => ({
  ...sleeper('held', 0),
  'held/solution/solve.sh': '#!/bin/bash\nfor i in $(seq 400); do [ -f /app/release ] && break; sleep 0.5; done\necho ok > out.txt\n',
});

/** Lets the batch's waiting oracle go on: a file in every running sandbox of the batch. */
async function release(docker: Docker, batchId: string): Promise<void> {
  for (const c of await docker.listContainers({ filters: { label: [`berth.batch=${batchId}`] } })) {
    const exec = await docker.getContainer(c.Id).exec({ Cmd: ['touch', '/app/release'] });
    await exec.start({});
  }
}

interface JobResult { finished_at: string | null; stats: { n_completed_trials: number; n_running_trials: number } }

describe('results store: a batch writes its job files as episodes close', () => {
  const h = useStoreWorker('i39-asitgoes', 'asitgoes');
  const { own } = h;
  const docker = new Docker();

  it('shows closed episodes in the store\'s rollouts.jsonl and result.json before the batch ends, then the finished job', async () => {
    const { client, store } = h;
    const worker = own.startWorker({ BERTH_HOME: mkdtempSync(join(tmpdir(), 'berth-host-')), BERTH_CONFIG: h.config('host', h.s3.berthToml(h.prefix)), BERTH_WORKER_SLOTS: '3' });
    // early closes first (written at once), second a few seconds later (inside the 30 s wait: the next write has it),
    // held once the test has seen both in the store.
    const resultsDir = join(mkdtempSync(join(tmpdir(), 'berth-jobs-')), 'r');
    const handle = await startBatch({ dataset: writeDataset({ ...sleeper('early', 0), ...sleeper('second', 6), ...held() }), concurrency: 3,
      taskQueue: own.env.BERTH_TASK_QUEUE, client, prepare: false, resultsDir });
    const batchId = handle.batchId;
    // This client collects the rows into its own results folder, but writes none of the job's files to the store while
    // the batch runs (only the batch does; a client's write once counted none running, and could land after the batch's).
    const collected = handle.wait();
    const localResult = (): JobResult | undefined => (existsSync(join(resultsDir, 'result.json')) ? JSON.parse(readFileSync(join(resultsDir, 'result.json'), 'utf8')) as JobResult : undefined);
    const localAfter = (completed: number) => waitUntil(async () => (localResult()?.stats.n_completed_trials ?? 0) >= completed, 60_000, `${completed} trials in the local result.json`);
    const batch = client.workflow.getHandle(`berth/${batchId}`);
    const text = (name: 'rollouts.jsonl' | 'result.json' | 'metrics.json') => store.getText(jobFileKey(store.settings, batchId, name));
    const storedRows = async (): Promise<ResultRow[]> => ((await text('rollouts.jsonl')) ?? '').split('\n').filter(Boolean).map((l) => JSON.parse(l) as ResultRow);
    const storedResult = async (): Promise<JobResult> => JSON.parse((await text('result.json'))!) as JobResult;
    const status = async (id: string) => (await client.workflow.getHandle(id).describe()).status.name;
    const closedAt = async (task: string) => (await client.workflow.getHandle(`berth/${batchId}/${task}/1`).describe()).closeTime!.getTime();
    const until = (task: string) => waitUntil(async () => (await storedRows()).some((r) => r.task_id === task), 240_000, `${task}'s row in the store's rollouts.jsonl`)
      .catch((err: Error) => { throw new Error(`${err.message}\n${worker.output()}`); });

    await until('early');
    const earlySeen = Date.now();
    const early = await storedResult();
    // Read before checking the batch: the files were there while it ran.
    expect(await status(`berth/${batchId}`)).toBe('RUNNING');
    expect(await status(`berth/${batchId}/held/1`)).toBe('RUNNING');
    expect(early.finished_at).toBeNull();
    expect(early.stats.n_completed_trials).toBeGreaterThanOrEqual(1);
    expect(early.stats.n_running_trials).toBeGreaterThan(0);
    expect(earlySeen - await closedAt('early')).toBeLessThan(30_000);

    await until('second');
    const secondSeen = Date.now();
    const second = await storedResult();
    expect(await status(`berth/${batchId}`)).toBe('RUNNING');
    expect(await status(`berth/${batchId}/held/1`)).toBe('RUNNING');
    expect((await storedRows()).map((r) => r.task_id).sort()).toEqual(['early', 'second']);
    expect(second).toMatchObject({ finished_at: null, stats: { n_completed_trials: 2, n_running_trials: 1 } });
    // The collecting client's own result.json counts the episodes the batch runs (held at least) while it runs.
    await localAfter(2);
    expect(localResult()).toMatchObject({ finished_at: null });
    expect(localResult()!.stats.n_running_trials).toBeGreaterThanOrEqual(1);
    // Within the bound: 30 s of workflow time, and the write's own time.
    expect(secondSeen - await closedAt('second')).toBeLessThan(45_000);
    await release(docker, batchId);

    // The batch's end: the finished job's files, every row.
    expect(await batch.result()).toMatchObject({ total: 3, done: 3, scored: 3 });
    const rows = await storedRows();
    expect(rows.map((r) => r.task_id).sort()).toEqual(['early', 'held', 'second']);
    expect(rows.every((r) => r.reward === 1)).toBe(true);
    const final = await storedResult();
    expect(final.finished_at).not.toBeNull();
    expect(final.stats).toMatchObject({ n_completed_trials: 3, n_running_trials: 0 });
    expect(JSON.parse((await text('metrics.json'))!)).toMatchObject({ batch_id: batchId, scored: 3 });
    expect((await collected).rows).toHaveLength(3);
    expect(localResult()!.stats).toMatchObject({ n_completed_trials: 3, n_running_trials: 0 });

    // From the batch's history: the writes while it ran started at least 30 s apart (the second waited), each ended
    // before the next began, and the last came after every other.
    const events = (await batch.fetchHistory()).events ?? [];
    const ms = (t: { seconds?: unknown; nanos?: number | null } | null | undefined) => Number(t!.seconds) * 1000 + Math.floor((t!.nanos ?? 0) / 1e6);
    const writes = events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'writeBatchJobFiles').map((e) => {
      const done = events.find((x) => String(x.activityTaskCompletedEventAttributes?.scheduledEventId ?? '') === String(e.eventId));
      const req = JSON.parse(Buffer.from(e.activityTaskScheduledEventAttributes!.input!.payloads![0]!.data!).toString('utf8')) as BatchJobFilesRequest;
      return { ...req, scheduled: ms(e.eventTime), completed: done ? ms(done.eventTime) : Infinity };
    });
    const partial = writes.filter((w) => !w.final);
    expect(writes.map((w) => w.final)).toEqual([...partial.map(() => false), true]);
    expect(partial.length).toBeGreaterThanOrEqual(2);
    expect(partial.at(-1)!.closed).toBe(2);
    for (let i = 1; i < writes.length; i++) expect(writes[i]!.scheduled).toBeGreaterThanOrEqual(writes[i - 1]!.completed);
    for (let i = 1; i < partial.length; i++) {
      expect(partial[i]!.closed!).toBeGreaterThan(partial[i - 1]!.closed!);
      expect(partial[i]!.scheduled - partial[i - 1]!.scheduled).toBeGreaterThanOrEqual(29_500);
    }
  }, 600_000);
});
