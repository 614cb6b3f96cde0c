import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
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
  // Replay needs the original workflow id: child ids are derived from it.
  const ids = historyIds();
  ids[name] = workflowId;
  writeFileSync(join(historiesDir, 'ids.json'), `${JSON.stringify(ids, null, 2)}\n`);
}

/** Fixture name → the workflow id it was recorded under. */
export function historyIds(): Record<string, string> {
  const file = join(historiesDir, 'ids.json');
  return existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) as Record<string, string> : {};
}

/**
 * The run ids of a workflow that continued as new, newest first, read along the history chain (each run's first
 * event names the run it continues). Visibility lists them too, but a loaded server updates it late.
 */
export async function runChain(client: Client, workflowId: string): Promise<string[]> {
  const runs: string[] = [];
  for (let runId: string | undefined = (await client.workflow.getHandle(workflowId).describe()).runId; runId;) {
    runs.push(runId);
    const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
    runId = history.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId || undefined;
  }
  return runs;
}

/** The arguments a run of a workflow started with (a continued run's carry the state its predecessor handed on). */
export async function runStartArgs(client: Client, workflowId: string, runId: string): Promise<unknown[]> {
  const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
  const payloads = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads ?? [];
  return payloads.map((p) => JSON.parse(Buffer.from(p.data ?? new Uint8Array()).toString('utf8')) as unknown);
}

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** The patches a history recorded, by id. */
export function patchMarkers(events: readonly HistoryEvent[]): string[] {
  return events.flatMap((e) => {
    const data = e.markerRecordedEventAttributes?.details?.['patch-data']?.payloads?.[0]?.data;
    return data ? [(JSON.parse(Buffer.from(data).toString('utf8')) as { id: string }).id] : [];
  });
}

/** The local activities a history recorded (their markers), by type, in order. */
export function localActivityTypes(events: readonly HistoryEvent[]): string[] {
  return events.flatMap((e) => {
    const a = e.markerRecordedEventAttributes;
    const data = a?.markerName === 'core_local_activity' ? a.details?.data?.payloads?.[0]?.data : undefined;
    if (!data) return [];
    const marker = JSON.parse(Buffer.from(data).toString('utf8')) as { activity_type?: string; activityType?: string };
    return [marker.activity_type ?? marker.activityType ?? '?'];
  });
}
