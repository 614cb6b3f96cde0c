// Issue 39, the store's cost to a batch (docs/deployment.md, A results store): a small attempt goes up inside its last
// verification before the batch hears of it, so the batch spends no workflow task on a slot-freed signal; a larger one
// tells the batch its slot is free first, so its window moves on during the upload. Both are stored whole.
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startBatch } from '../../src/client/batch.ts';
import { listEpisodes } from '../../src/client/episodes.ts';
import { readManifest } from '../../src/store/index.ts';
import type { ResultRow } from '../../src/workflows/types.ts';
import { BASE_TOML, echoTask, writeDataset } from '../helpers/tasks.ts';
import { useStoreWorker } from '../helpers/store-worker.ts';
import { waitUntil } from '../helpers/worker-process.ts';

/** A task whose test leaves 3 MiB among the verifier's logs: more than one request's worth (QUICK_UPLOAD_BYTES). */
const midTask = (): Record<string, string> => ({
  'mid/task.toml': BASE_TOML,
  'mid/instruction.md': 'Write ok to out.txt\n',
  'mid/solution/solve.sh': '#!/bin/bash\necho ok > out.txt\n',
  'mid/tests/test.sh': '#!/bin/bash\nhead -c 3145728 /dev/urandom > /logs/verifier/mid.bin\ngrep -q ok /app/out.txt && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt\n',
});

/** The workflow ids the batch was told had freed their slot, from its history. */
async function slotFreedSignals(client: Client, batchId: string): Promise<string[]> {
  const history = await client.workflow.getHandle(`berth/${batchId}`).fetchHistory();
  return (history.events ?? []).flatMap((e) => {
    const s = e.workflowExecutionSignaledEventAttributes;
    if (e.eventType !== temporal.api.enums.v1.EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED || s?.signalName !== 'episodeSlotFreed') return [];
    const payload = s.input?.payloads?.[0]?.data;
    return [(JSON.parse(Buffer.from(payload!).toString('utf8')) as { workflowId: string }).workflowId];
  });
}

describe('results store: the batch told of a freed slot only when the upload takes a while', () => {
  const h = useStoreWorker('i39-slot', 'slot');
  const { own, config } = h;

  it('a small attempt: no signal, one manifest holding its files; a 3 MiB one: the signal first, then its upload', async () => {
    own.startWorker({ BERTH_HOME: mkdtempSync(join(tmpdir(), 'berth-host-')), BERTH_CONFIG: config('host', h.s3.berthToml(h.prefix)) });
    const handle = await startBatch({ dataset: writeDataset({ ...echoTask('small'), ...midTask() }), concurrency: 2, taskQueue: own.env.BERTH_TASK_QUEUE,
      client: h.client, prepare: false, resultsDir: join(mkdtempSync(join(tmpdir(), 'berth-jobs-')), 'r') });
    await handle.close();
    await h.client.workflow.getHandle(`berth/${handle.batchId}`).result();
    let ids: string[] = [];
    await waitUntil(async () => (ids = (await listEpisodes(h.client, handle.batchId)).map((e) => e.workflowId)).length === 2, 60_000, 'two episodes listed');
    const rows = await Promise.all(ids.map(async (id) => await h.client.workflow.getHandle(id).result() as ResultRow));
    const small = rows.find((r) => r.task_id === 'small')!;
    const mid = rows.find((r) => r.task_id === 'mid')!;
    for (const row of [small, mid]) {
      expect(row.reward).toBe(1);
      expect(row.store_error).toBeUndefined();
      expect(row.store_key).toBeDefined();
    }
    expect(await slotFreedSignals(h.client, handle.batchId)).toEqual([mid.workflow_id]);
    // The small attempt is its manifest alone; the larger one has its 3 MiB file as an object of its own.
    const smallManifest = (await readManifest(h.store, small.store_key!))!;
    expect(smallManifest.files.every((f) => f.inline !== undefined)).toBe(true);
    expect(smallManifest.files.map((f) => f.path)).toContain('turn-1/verifier/reward.txt');
    expect(await h.store.list(`${small.store_key!}/files/`)).toEqual([]);
    expect((await h.store.list(`${mid.store_key!}/files/`)).map((o) => o.key.split('/').pop())).toEqual(['mid.bin']);
  }, 600_000);
});
