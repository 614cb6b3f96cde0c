import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Docker from 'dockerode';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBatch } from '../../src/client/batch.ts';
import { LABEL_BATCH } from '../../src/sandbox/index.ts';
import type { ResultRow } from '../../src/workflows/types.ts';
import { startTestWorkers, type TestCluster } from '../helpers/temporal.ts';
import { BASE_TOML, echoTask, writeDataset } from '../helpers/tasks.ts';
import { localActivityTypes } from '../helpers/histories.ts';

interface ContainerEvent { Action: string; Actor: { Attributes: Record<string, string> } }

/**
 * Watches the engine's container create events live (its own buffer of past events is short on a busy engine):
 * `stop()` returns what it saw.
 */
async function watchCreates(): Promise<{ stop(): ContainerEvent[] }> {
  const stream = await new Docker().getEvents({ filters: { type: ['container'], event: ['create'], label: [LABEL_BATCH] } } as Docker.GetEventsOptions);
  let text = '';
  stream.on('data', (chunk: Buffer) => { text += chunk.toString(); });
  return {
    stop() {
      (stream as NodeJS.ReadableStream & { destroy(): void }).destroy();
      return text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as ContainerEvent);
    },
  };
}

async function activities(cluster: TestCluster, workflowId: string): Promise<Array<{ type: string; startToCloseSec: number; attempt: number }>> {
  const events = (await cluster.client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  const byId = new Map<string, { type: string; startToCloseSec: number; attempt: number }>();
  for (const e of events) {
    const s = e.activityTaskScheduledEventAttributes;
    if (s) byId.set(String(e.eventId), { type: s.activityType?.name ?? '', startToCloseSec: Number(s.startToCloseTimeout?.seconds ?? 0), attempt: 0 });
    const started = e.activityTaskStartedEventAttributes;
    if (started) byId.get(String(started.scheduledEventId))!.attempt = started.attempt ?? 0;
  }
  return [...byId.values()];
}

// Issue 12: bad input costs no agent time, and a slow verification is still scored.
describe('work that must not start, and verification limits (end to end)', () => {
  let cluster: TestCluster;
  let rows: Record<string, ResultRow>;
  let creates: ContainerEvent[];

  beforeAll(async () => {
    cluster = await startTestWorkers('before-work');
    delete process.env.BERTH_E2E_UNSET_JUDGE_KEY;
    const watch = await watchCreates();
    const dataset = writeDataset({
      ...echoTask('fine'),
      ...echoTask('needs-judge', 'ok', `${BASE_TOML}[verifier.env]\nJUDGE = "\${BERTH_E2E_UNSET_JUDGE_KEY}"\n`),
      // The hook outlasts what the verify activity used to get (the longest agent/verifier budget plus 60 s).
      ...echoTask('slow-hook', 'ok', [
        '[environment]', 'docker_image = "berth-base:bookworm"', 'workdir = "/app"',
        '[agent]', 'timeout_sec = 1',
        '[verifier]', 'timeout_sec = 2',
        '[[verifier.collect]]', 'command = "sleep 63"', 'timeout_sec = 70', '',
      ].join('\n')),
    });
    const slowTest = join(dataset, 'slow-hook', 'tests', 'test.sh');
    writeFileSync(slowTest, '#!/bin/bash\nsleep 30\necho 1 > /logs/verifier/reward.txt\n', { mode: 0o755 });
    const handle = await startBatch({ dataset, resultsDir: mkdtempSync(join(tmpdir(), 'berth-bw-')), taskQueue: cluster.taskQueue, client: cluster.client });
    rows = Object.fromEntries((await handle.wait()).rows.map((r) => [r.task_id, r]));
    creates = watch.stop();
  }, 240_000);
  afterAll(async () => { await cluster?.stop(); });

  // Task Folder Verifiers § Environment variables and secrets: "A missing required value fails the episode
  // before any sandbox starts."
  it('an unset variable in [verifier].env masks the episode as harbor:seed_failed, naming table, key and variable; no container was ever created', async () => {
    const row = rows['needs-judge']!;
    expect(row).toMatchObject({ mask_sample: true, reward: null, failure_kind: 'harbor:seed_failed', host: null, logs_dir: null });
    expect(row.failure_reason).toContain('task.toml: [verifier].env JUDGE reads ${BERTH_E2E_UNSET_JUDGE_KEY}, which is set neither in [secrets] of berth.toml nor in the worker\'s environment');
    expect(Object.keys(row.timings)).toEqual([]);
    // Planning failed (in the episode's local activity): no seed, no agent turn, no teardown was ever scheduled.
    expect((await activities(cluster, row.workflow_id)).map((a) => a.type)).toEqual([]);
    expect(localActivityTypes((await cluster.client.workflow.getHandle(row.workflow_id).fetchHistory()).events ?? [])).toEqual(['planAndTryHost']);
    const byWorkflow = (id: string) => creates.filter((e) => e.Actor.Attributes['berth.workflow'] === id);
    // The filter sees the batch's other sandboxes, so an empty list for this episode means none was created.
    expect(byWorkflow(rows.fine!.workflow_id)).toHaveLength(1);
    expect(byWorkflow(row.workflow_id)).toEqual([]);
    expect(rows.fine).toMatchObject({ reward: 1, mask_sample: false });
  });

  // Task Folder Verifiers § Reward files: test.sh past its timeout scores 0 with harbor:verifier_timeout and counts.
  it('a slow collect hook and a test.sh that times out: scored 0 as harbor:verifier_timeout, not masked, in one attempt', async () => {
    const row = rows['slow-hook']!;
    expect(row).toMatchObject({ reward: 0, failure_kind: 'harbor:verifier_timeout', mask_sample: false, attempt: 1 });
    const verify = (await activities(cluster, row.workflow_id)).filter((a) => a.type === 'verifyTurn');
    expect(verify).toHaveLength(1);
    expect(verify[0]!.attempt).toBe(1);
    // Its limit covers the hook (70 s), test.sh (2 s), their exec overheads and the phases around them.
    expect(verify[0]!.startToCloseSec).toBeGreaterThan(70 + 2 + 60);
  });
});
