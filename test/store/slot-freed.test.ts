// Issue 39, the store's cost to a batch (docs/deployment.md, A results store): a small attempt goes up inside its last
// verification before the batch hears of it, so the batch spends no workflow task on a slot-freed signal; a larger one
// tells the batch its slot is free first, so its window moves on during the upload. Both are stored whole.
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBatch } from '../../src/client/batch.ts';
import { listEpisodes } from '../../src/client/episodes.ts';
import { storeLocationOf } from '../../src/config/results-store.ts';
import { readManifest, ResultsStore } from '../../src/store/index.ts';
import type { ResultRow } from '../../src/workflows/types.ts';
import { startS3Server, type S3Server } from '../helpers/s3-server.ts';
import { BASE_TOML, echoTask, writeDataset } from '../helpers/tasks.ts';
import { ownWorkerQueues, waitUntil } from '../helpers/worker-process.ts';

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
  const own = ownWorkerQueues('i39-slot');
  const configDir = mkdtempSync(join(tmpdir(), 'berth-store-config-'));
  const config = (name: string, text: string): string => { const f = join(configDir, `${name}.toml`); writeFileSync(f, text); return f; };
  const previousConfig = process.env.BERTH_CONFIG;
  let s3: S3Server;
  let store: ResultsStore;
  let client: Client;
  let prefix: string;

  beforeAll(async () => {
    s3 = await startS3Server();
    prefix = `slot-${randomBytes(3).toString('hex')}`;
    process.env.BERTH_CONFIG = config('client', s3.berthToml(prefix));
    store = new ResultsStore({ ...storeLocationOf(`s3://${s3.bucket}/${prefix}`), endpoint: s3.endpoint, region: s3.region, pathStyle: true, keepLocal: true },
      { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey });
    client = await own.client();
  }, 600_000);

  afterAll(async () => {
    if (previousConfig === undefined) delete process.env.BERTH_CONFIG; else process.env.BERTH_CONFIG = previousConfig;
    await own.stop();
    store?.destroy();
    await s3?.stop();
  }, 180_000);

  it('a small attempt: no signal, one manifest holding its files; a 3 MiB one: the signal first, then its upload', async () => {
    own.startWorker({ BERTH_HOME: mkdtempSync(join(tmpdir(), 'berth-host-')), BERTH_CONFIG: config('host', s3.berthToml(prefix)) });
    const handle = await startBatch({ dataset: writeDataset({ ...echoTask('small'), ...midTask() }), concurrency: 2, taskQueue: own.env.BERTH_TASK_QUEUE,
      client, prepare: false, resultsDir: join(mkdtempSync(join(tmpdir(), 'berth-jobs-')), 'r') });
    await handle.close();
    await client.workflow.getHandle(`berth/${handle.batchId}`).result();
    let ids: string[] = [];
    await waitUntil(async () => (ids = (await listEpisodes(client, handle.batchId)).map((e) => e.workflowId)).length === 2, 60_000, 'two episodes listed');
    const rows = await Promise.all(ids.map(async (id) => await client.workflow.getHandle(id).result() as ResultRow));
    const small = rows.find((r) => r.task_id === 'small')!;
    const mid = rows.find((r) => r.task_id === 'mid')!;
    for (const row of [small, mid]) {
      expect(row.reward).toBe(1);
      expect(row.store_error).toBeUndefined();
      expect(row.store_key).toBeDefined();
    }
    expect(await slotFreedSignals(client, handle.batchId)).toEqual([mid.workflow_id]);
    // The small attempt is its manifest alone; the larger one has its 3 MiB file as an object of its own.
    const smallManifest = (await readManifest(store, small.store_key!))!;
    expect(smallManifest.files.every((f) => f.inline !== undefined)).toBe(true);
    expect(smallManifest.files.map((f) => f.path)).toContain('turn-1/verifier/reward.txt');
    expect(await store.list(`${small.store_key!}/files/`)).toEqual([]);
    expect((await store.list(`${mid.store_key!}/files/`)).map((o) => o.key.split('/').pop())).toEqual(['mid.bin']);
  }, 600_000);
});
