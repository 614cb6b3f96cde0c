import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const historiesDir = join(import.meta.dirname, '..', 'fixtures', 'histories');

/**
 * With BERTH_RECORD_HISTORIES=1, saves a finished workflow's history (binary protobuf) as a replay
 * fixture for test/workflows/replay.test.ts. Binary, because the SDK's proto JSON helpers use a
 * second protobufjs copy that rejects the first one's types.
 */
export async function recordHistory(client: Client, workflowId: string, name: string): Promise<void> {
  if (!process.env.BERTH_RECORD_HISTORIES) return;
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  mkdirSync(historiesDir, { recursive: true });
  writeFileSync(join(historiesDir, `${name}.binpb`), temporal.api.history.v1.History.encode(history).finish());
}
